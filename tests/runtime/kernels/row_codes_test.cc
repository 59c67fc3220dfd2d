// The arg-max shortcut's row kernels against a naive loop of their
// definition (row_codes.h): the largest magnitude with NaN skipped, the sum
// of magnitudes in its 16 lanes and pairwise order, codes rounded to
// nearest even and clamped, the largest miss; and the dispatched kernels
// giving the portable ones' bits (the x86 variants: x86/row_codes_*_test.cc).
#include "kernels/row_codes.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "support/kernel_testing.h"
#include "support/row_codes_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;

TEST_CASE("kernels/row_codes: magnitudes as their definition") {
  Random rng(61);
  for (size_t depth : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{40}, size_t{512}}) {
    CAPTURE(depth);
    std::vector<float> w = testing::row_codes_row(rng, depth);
    if (depth > 10) w[10] = NAN;  // skipped by the maximum, poisons the sum
    double lanes[kRowCodeLanes] = {};
    float want_largest = 0.0f;
    for (size_t k = 0; k < depth; ++k) {
      lanes[k % kRowCodeLanes] += std::fabs(static_cast<double>(w[k]));
      if (std::fabs(w[k]) > want_largest) want_largest = std::fabs(w[k]);
    }
    for (size_t j = 0; j < 8; ++j) lanes[j] += lanes[j + 8];
    for (size_t j = 0; j < 4; ++j) lanes[j] += lanes[j + 4];
    for (size_t j = 0; j < 2; ++j) lanes[j] += lanes[j + 2];
    const double want_sum = lanes[0] + lanes[1];
    float largest = -1.0f;
    double sum = -1.0;
    row_magnitudes_portable(w.data(), depth, &largest, &sum);
    CHECK(largest == want_largest);
    if (depth > 10) {
      CHECK(std::isnan(sum));
    } else {
      CHECK(std::memcmp(&sum, &want_sum, sizeof sum) == 0);
    }
  }
}

TEST_CASE("kernels/row_codes: codes and their largest miss as their definition") {
  Random rng(62);
  for (size_t depth : {size_t{1}, size_t{7}, size_t{16}, size_t{33}, size_t{256}}) {
    CAPTURE(depth);
    std::vector<float> w = testing::row_codes_row(rng, depth);
    float largest = 0.0f;
    for (float x : w) largest = std::fmax(largest, std::fabs(x));
    const float s = largest / 127.0f;
    const float inverse = 1.0f / s;
    if (depth > 2) w[1] = 2.5f * s, w[2] = -3.5f * s;  // ties: 2 and -4 if w·inverse is exactly .5
    std::vector<int8_t> codes(depth);
    const double error = quantize_row_portable(w.data(), depth, s, inverse, codes.data());
    double want_error = 0.0;
    for (size_t k = 0; k < depth; ++k) {
      CAPTURE(k);
      const float scaled = w[k] * inverse;
      const float code = std::fmax(-127.0f, std::fmin(127.0f, std::nearbyint(scaled)));
      CHECK(codes[k] == static_cast<int8_t>(code));
      want_error = std::fmax(want_error, std::fabs(static_cast<double>(w[k]) -
                                                   static_cast<double>(s) * static_cast<double>(code)));
    }
    CHECK(error == want_error);
    CHECK(error <= 0.5 * static_cast<double>(s) * (1.0 + 1e-6));  // at most half a step
  }
}

TEST_CASE("kernels/row_codes: the dispatched kernels give the portable ones' bits") {
  testing::check_same_row_codes(row_magnitudes, quantize_row, row_magnitudes_portable,
                                quantize_row_portable, 63);
}

}  // namespace
}  // namespace edgemt::kernels
