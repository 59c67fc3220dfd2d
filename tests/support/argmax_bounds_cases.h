// The cases an x86 pass 1 of the arg-max shortcut must give the portable
// pass's bits on (the portable one is checked against its equation in
// tests/runtime/kernels/argmax_bounds_test.cc): every length 0 to max_length around the
// lanes, banned (NaN) ids, signed zeros, and an infinity in the lanes or
// the tail. A NaN equals any NaN (a banned id's A + B is never read as a
// number).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/argmax_bounds.h"
#include "support/kernel_testing.h"

namespace edgemt::kernels::bounds_testing {

using ArgmaxBoundsPass = float (*)(const float*, const float*, const float*,
                                   const ArgmaxBoundFactors&, float, size_t, float*, bool*);

inline void check_portable_bits(ArgmaxBoundsPass pass, uint32_t seed, size_t max_length) {
  edgemt::testing::Random rng(seed);
  ArgmaxBoundFactors f;
  f.error = 25.0f;
  f.l1 = 0.002f;
  f.bias = 6e-8f;
  f.approx = 2.4e-7f;
  const float widening = 1.0f + 1.0f / 1024.0f;
  for (size_t n = 0; n <= max_length; ++n) {
    for (int infinity_at = -1; infinity_at < 2; ++infinity_at) {  // none, lanes, tail
      CAPTURE(n);
      CAPTURE(infinity_at);
      std::vector<float> max_error = rng.normal_vector(n, 0.0f, 0.01f);
      std::vector<float> l1 = rng.normal_vector(n, 0.0f, 5.0f);
      std::vector<float> abs_bias = rng.normal_vector(n, 0.0f, 0.5f);
      for (std::vector<float>* v : {&max_error, &l1, &abs_bias}) {
        for (float& x : *v) x = std::fabs(x);
      }
      std::vector<float> approx = rng.normal_vector(n, 0.0f, 4.0f);
      for (size_t i = 3; i < n; i += 11) approx[i] = NAN;
      for (size_t i = 5; i < n; i += 13) approx[i] = -0.0f;
      if (infinity_at == 0 && n > 2) approx[2] = INFINITY;
      if (infinity_at == 1 && n > 0) l1[n - 1] = INFINITY;
      std::vector<float> want = approx, got = approx;
      bool want_infinite = false, got_infinite = false;
      const float want_threshold = argmax_upper_bounds_portable(
          max_error.data(), l1.data(), abs_bias.data(), f, widening, n, want.data(), &want_infinite);
      const float got_threshold =
          pass(max_error.data(), l1.data(), abs_bias.data(), f, widening, n, got.data(), &got_infinite);
      CHECK(edgemt::testing::same_bits_any_nan(got.data(), want.data(), n));
      CHECK(got_threshold == want_threshold);
      CHECK(got_infinite == want_infinite);
    }
  }
}

}  // namespace edgemt::kernels::bounds_testing
