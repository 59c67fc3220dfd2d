// Rows for the row_codes kernel tests (runtime/kernels/row_codes.h) and
// the comparison of a variant with the portable one: codes, the error, the
// largest magnitude and the sum, bit for bit.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "support/kernel_testing.h"

namespace edgemt::testing {

// A row of `depth` weights like an output projection's, with the cases the
// kernels must agree on: signed zeros, values that land on .5 at the
// row's scale (ties to even), and one weight far larger than the rest.
inline std::vector<float> row_codes_row(Random& rng, size_t depth) {
  std::vector<float> w = rng.normal_vector(depth, 0.0f, 0.05f);
  if (depth > 3) w[3] = -0.0f;
  if (depth > 5) w[5] = 0.0f;
  if (depth > 9) w[depth - 9] = rng.uniform(-2.0f, 2.0f);
  return w;
}

using RowMagnitudes = void (*)(const float*, size_t, float*, double*);
using QuantizeRow = double (*)(const float*, size_t, float, float, int8_t*);

// Checks that (magnitudes, quantize) give (want_magnitudes, want_quantize)'s
// bits on every depth 0-70 and 256, 512, 1000, and on rows with a NaN or
// an infinity (the magnitudes only: quantize_row is never given such rows).
inline void check_same_row_codes(RowMagnitudes magnitudes, QuantizeRow quantize,
                                 RowMagnitudes want_magnitudes, QuantizeRow want_quantize,
                                 uint32_t seed) {
  Random rng(seed);
  for (size_t depth : lane_test_lengths()) {
    CAPTURE(depth);
    const std::vector<float> w = row_codes_row(rng, depth);
    float largest = -1.0f, want_largest = -2.0f;
    double sum = -1.0, want_sum = -2.0;
    magnitudes(w.data(), depth, &largest, &sum);
    want_magnitudes(w.data(), depth, &want_largest, &want_sum);
    CHECK(bits_of(largest) == bits_of(want_largest));
    CHECK(std::memcmp(&sum, &want_sum, sizeof sum) == 0);
    const float s = want_largest / 127.0f;
    const float inverse = s > 0.0f ? 1.0f / s : 0.0f;
    std::vector<int8_t> codes(depth + 1, 99), want_codes(depth + 1, 99);
    const double error = quantize(w.data(), depth, s, inverse, codes.data());
    const double want_error = want_quantize(w.data(), depth, s, inverse, want_codes.data());
    CHECK(codes == want_codes);  // the byte after the row untouched too
    CHECK(std::memcmp(&error, &want_error, sizeof error) == 0);
    for (float odd : {NAN, INFINITY}) {
      if (depth == 0) break;
      std::vector<float> with = w;
      with[depth / 2] = odd;
      magnitudes(with.data(), depth, &largest, &sum);
      want_magnitudes(with.data(), depth, &want_largest, &want_sum);
      CHECK(bits_of(largest) == bits_of(want_largest));
      CHECK_FALSE(std::isfinite(sum));
      CHECK(std::isnan(sum) == std::isnan(want_sum));
    }
  }
}

}  // namespace edgemt::testing
