// Rows for the vocabulary-row kernels' tests (kernels/vocab_row.h): lengths
// around the 16-lane chunks and the 512-entry sum blocks, and entries that
// test the edges: ties, -inf, NaN, +inf, values far apart.
#pragma once

#include <cmath>
#include <cstring>
#include <cstddef>
#include <limits>
#include <vector>

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

}  // namespace edgemt::testing
