// The AVX-512 vocabulary-row passes give the portable ones' bits (the
// portable ones are checked against naive references in
// ../vocab_row_test.cc); skipped on CPUs without AVX-512.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/vocab_row.h"
#include "support/vocab_row_cases.h"

namespace edgemt::kernels {
namespace {

using testing::Random;

TEST_CASE("kernels/vocab_row_avx512: the portable passes' bits" * doctest::skip(!cpu_features().avx512)) {
  Random rng(21);
  for (int round = 0; round < 3; ++round) {
    for (size_t n : testing::vocab_row_lengths()) {
      for (int kind = 0; kind <= 6; ++kind) {
        CAPTURE(n);
        CAPTURE(kind);
        const std::vector<float> x = testing::vocab_row(rng, n, kind);
        const RowNormalizer want = normalize_row(x.data(), n);
        const RowNormalizer got = normalize_row_avx512(x.data(), n);
        CHECK(testing::same_bits(got.max, want.max));
        CHECK(testing::same_bits(got.log_total, want.log_total));
        CHECK(argmax_avx512(x.data(), n) == argmax(x.data(), n));
        for (float threshold : {-INFINITY, -20.0f, -6.0f, -1.0f, 0.0f, INFINITY}) {
          const size_t begin = n == 0 ? 0 : rng.index(0, n - 1);
          CHECK(first_above_avx512(x.data(), begin, n, -1.5f, want, threshold) ==
                first_above(x.data(), begin, n, -1.5f, want, threshold));
        }
      }
    }
  }
}

TEST_CASE("kernels/vocab_row_avx512: exp over every float exponent gives the portable bits" * doctest::skip(!cpu_features().avx512)) {
  // One row per decade of inputs, each normalized against 0 (a 0 entry is
  // the max of rows of negatives): the sum runs exp over the row.
  for (float scale : {1e-30f, 1e-6f, 0.01f, 1.0f, 10.0f, 80.0f, 103.0f, 104.5f, 150.0f}) {
    std::vector<float> x(1000);
    for (size_t i = 0; i < x.size(); ++i) x[i] = -scale * static_cast<float>(i) / 999.0f;
    const RowNormalizer want = normalize_row(x.data(), x.size());
    const RowNormalizer got = normalize_row_avx512(x.data(), x.size());
    CHECK(testing::same_bits(got.log_total, want.log_total));
  }
}

}  // namespace
}  // namespace edgemt::kernels
