// The portable vocabulary-row passes against naive references: the
// normalizer against double precision and against log_softmax (the same
// bits), arg-max and the threshold scan against plain loops.
#include "kernels/vocab_row.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/softmax.h"
#include "support/vocab_row_cases.h"

namespace edgemt::kernels {
namespace {

using testing::Random;

size_t naive_argmax(const std::vector<float>& x) {
  size_t best = x.size();
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) continue;
    if (best == x.size() || x[i] > x[best]) best = i;
  }
  return best;
}

TEST_CASE("kernels/vocab_row: normalize_row is log_softmax's normalizer, bit for bit") {
  Random rng(11);
  for (size_t n : testing::vocab_row_lengths()) {
    for (int kind = 0; kind <= 6; ++kind) {
      CAPTURE(n);
      CAPTURE(kind);
      std::vector<float> x = testing::vocab_row(rng, n, kind);
      const RowNormalizer norm = normalize_row(x.data(), n);
      CHECK(testing::same_bits(norm.max + norm.log_total, log_sum_exp(x.data(), n)));
      std::vector<float> y = x;
      const float lse = log_softmax(y.data(), n);
      CHECK(testing::same_bits(lse, norm.max + norm.log_total));
      if (!std::isfinite(lse)) continue;
      for (size_t v = 0; v < n; ++v) {
        // base 0: beam_score is log_softmax's entry (0 + (-0) = +0 aside).
        CHECK(beam_score(x[v], 0.0f, norm) == y[v]);
      }
    }
  }
}

TEST_CASE("kernels/vocab_row: normalize_row against double precision") {
  Random rng(12);
  for (size_t n : {1, 17, 513, 8000}) {
    std::vector<float> x = rng.normal_vector(n, 0.0f, 5.0f);
    double m = -HUGE_VAL;
    // A comparison, not std::fmax: GCC 12 for AArch64 crashes vectorizing an
    // fmax reduction (as noted in kernels/reduce.h).
    for (float v : x) m = static_cast<double>(v) > m ? static_cast<double>(v) : m;
    double sum = 0.0;
    for (float v : x) sum += std::exp(static_cast<double>(v) - m);
    const RowNormalizer norm = normalize_row(x.data(), n);
    CHECK(static_cast<double>(norm.max) == m);
    CHECK(std::fabs(static_cast<double>(norm.log_total) - std::log(sum)) < 1e-5 * (1.0 + std::log(sum)));
  }
}

TEST_CASE("kernels/vocab_row: log_sum_exp_finite is whether the normalizer's sum is finite") {
  Random rng(14);
  for (size_t n : testing::vocab_row_lengths()) {
    for (int kind = 0; kind <= 6; ++kind) {
      CAPTURE(n);
      CAPTURE(kind);
      const std::vector<float> x = testing::vocab_row(rng, n, kind);
      const RowNormalizer norm = normalize_row(x.data(), n);
      CHECK(log_sum_exp_finite(x.data(), n) == std::isfinite(norm.max + norm.log_total));
    }
  }
  // Each special value alone, at every position of a short row (vector
  // lanes and the scalar tail), among finite entries or among -inf ones.
  for (float special : {NAN, INFINITY, -INFINITY, -NAN, 3.0e38f, -3.0e38f}) {
    for (float others : {1.0f, -INFINITY}) {
      for (size_t n : {size_t{1}, size_t{5}, size_t{11}}) {
        for (size_t at = 0; at < n; ++at) {
          CAPTURE(special);
          CAPTURE(others);
          CAPTURE(n);
          CAPTURE(at);
          std::vector<float> x(n, others);
          x[at] = special;
          const RowNormalizer norm = normalize_row(x.data(), n);
          CHECK(log_sum_exp_finite(x.data(), n) == std::isfinite(norm.max + norm.log_total));
        }
      }
    }
  }
}

TEST_CASE("kernels/vocab_row: argmax is the first maximum, NaN ignored") {
  const float x[6] = {9.0f, 1.0f, 9.0f, 5.0f, 7.0f, 7.0f};
  CHECK(argmax(x, 6) == 0);
  CHECK(argmax(x + 1, 5) == 1);
  CHECK(argmax(x, 0) == 0);
  const float nans[3] = {std::nanf(""), std::nanf(""), std::nanf("")};
  CHECK(argmax(nans, 3) == 3);
  const float mixed[4] = {std::nanf(""), -INFINITY, 2.0f, std::nanf("")};
  CHECK(argmax(mixed, 4) == 2);
  Random rng(13);
  for (size_t n : testing::vocab_row_lengths()) {
    for (int kind = 0; kind <= 6; ++kind) {
      std::vector<float> row = testing::vocab_row(rng, n, kind);
      CHECK(argmax(row.data(), n) == naive_argmax(row));
    }
  }
}

TEST_CASE("kernels/vocab_row: first_above finds the first entry whose beam score beats the threshold") {
  Random rng(14);
  for (size_t n : testing::vocab_row_lengths()) {
    for (int kind = 0; kind <= 6; ++kind) {
      std::vector<float> x = testing::vocab_row(rng, n, kind);
      const RowNormalizer norm = normalize_row(x.data(), n);
      for (float threshold : {-INFINITY, -12.0f, -3.5f, -0.5f, 0.0f, INFINITY}) {
        const float base = -2.25f;
        size_t begin = n == 0 ? 0 : rng.index(0, n - 1);
        size_t expected = n;
        for (size_t v = begin; v < n; ++v) {
          if (base + ((x[v] - norm.max) - norm.log_total) > threshold) {
            expected = v;
            break;
          }
        }
        CHECK(first_above(x.data(), begin, n, base, norm, threshold) == expected);
      }
    }
  }
}

TEST_CASE("kernels/vocab_row: the best variant is listed first, portable last") {
  VocabRowKernels all[4];
  const size_t count = available_vocab_row_kernels(all, 4);
  REQUIRE(count >= 1);
  CHECK(std::string(all[count - 1].name) == "portable");
  CHECK(std::string(best_vocab_row_kernels().name) == all[0].name);
}

}  // namespace
}  // namespace edgemt::kernels
