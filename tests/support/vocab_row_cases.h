// Rows for the vocabulary-row kernels' tests (kernels/vocab_row.h): lengths
// around the 16-lane chunks and the 512-entry sum blocks, and entries that
// test the edges: ties, -inf, NaN, +inf, values far apart.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <cstddef>
#include <limits>
#include <vector>

#include "kernels/vocab_row.h"
#include "support/kernel_testing.h"

namespace edgemt::testing {

inline std::vector<size_t> vocab_row_lengths() {
  return {0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 100, 511, 512, 513, 1024, 1031, 8000, 58101};
}

// Kind 0: normal logits; 1: with ties at the max; 2: with -inf entries;
// 3: a NaN; 4: all -inf; 5: one +inf; 6: wide range (exp under/overflow).
inline std::vector<float> vocab_row(Random& rng, size_t n, int kind) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> x = rng.normal_vector(n, 0.0f, kind == 6 ? 60.0f : 4.0f);
  if (n == 0) return x;
  switch (kind) {
    case 1: {
      const float top = 30.0f;
      for (int t = 0; t < 3; ++t) x[rng.index(0, n - 1)] = top;
      break;
    }
    case 2:
      for (size_t i = 0; i < n; i += 1 + rng.index(0, 6)) x[i] = -kInf;
      break;
    case 3: x[rng.index(0, n - 1)] = std::nanf(""); break;
    case 4:
      for (float& v : x) v = -kInf;
      break;
    case 5: x[rng.index(0, n - 1)] = kInf; break;
    default: break;
  }
  return x;
}

inline bool same_bits(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

// A CPU-specific variant gives the portable passes' bits on rows of every
// kind and length, and its exp does over every float exponent. Call inside a
// TEST_CASE (doctest checks).
inline void check_same_bits_as_portable(const kernels::VocabRowKernels& variant) {
  using kernels::RowNormalizer;
  Random rng(21);
  for (int round = 0; round < 3; ++round) {
    for (size_t n : vocab_row_lengths()) {
      for (int kind = 0; kind <= 6; ++kind) {
        CAPTURE(n);
        CAPTURE(kind);
        const std::vector<float> x = vocab_row(rng, n, kind);
        const RowNormalizer want = kernels::normalize_row(x.data(), n);
        const RowNormalizer got = variant.normalize(x.data(), n);
        CHECK(same_bits(got.max, want.max));
        CHECK(same_bits(got.log_total, want.log_total));
        CHECK(variant.argmax(x.data(), n) == kernels::argmax(x.data(), n));
        for (float threshold : {-INFINITY, -20.0f, -6.0f, -1.0f, 0.0f, INFINITY}) {
          const size_t begin = n == 0 ? 0 : rng.index(0, n - 1);
          CHECK(variant.first_above(x.data(), begin, n, -1.5f, want, threshold) ==
                kernels::first_above(x.data(), begin, n, -1.5f, want, threshold));
        }
      }
    }
  }
  // One row per decade of inputs, each normalized against 0 (a 0 entry is
  // the max of rows of negatives): the sum runs exp over the row.
  for (float scale : {1e-30f, 1e-6f, 0.01f, 1.0f, 10.0f, 80.0f, 103.0f, 104.5f, 150.0f}) {
    CAPTURE(scale);
    std::vector<float> x(1000);
    for (size_t i = 0; i < x.size(); ++i) x[i] = -scale * static_cast<float>(i) / 999.0f;
    const RowNormalizer want = kernels::normalize_row(x.data(), x.size());
    const RowNormalizer got = variant.normalize(x.data(), x.size());
    CHECK(same_bits(got.log_total, want.log_total));
  }
}

}  // namespace edgemt::testing
