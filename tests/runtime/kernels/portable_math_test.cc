// exp_f32 / normal_cdf_f32 / log_f64 / tanh_f32 / sigmoid_f32
// (kernels/portable_math.h) against libm in double; fma_f32 on sums that
// rounding twice gets wrong, and natively against std::fma.
#include "kernels/portable_math.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace edgemt::kernels::math {
namespace {

TEST_CASE("kernels/portable_math: exp_f32 within 2 ulp on [-87 - 88] - exact limits") {
  double worst = 0.0, worst_x = 0.0;
  for (int i = -8700000; i <= 8800000; ++i) {
    const float x = static_cast<float>(i) * 1e-5f;
    const double ref = std::exp(static_cast<double>(x));
    const double ulp = std::ldexp(1.0, std::ilogb(ref) - 23);  // float ulp at ref
    const double e = std::fabs(static_cast<double>(exp_f32(x)) - ref) / ulp;
    if (!(e <= worst)) {
      worst = e;
      worst_x = static_cast<double>(x);
    }
  }
  CAPTURE(worst_x);
  CHECK(worst <= 2.0);
  CHECK(exp_f32(0.0f) == 1.0f);
  CHECK(exp_f32(-INFINITY) == 0.0f);
  CHECK(exp_f32(-200.0f) == 0.0f);
  CHECK(exp_f32(INFINITY) == INFINITY);
  CHECK(exp_f32(89.0f) == INFINITY);
  CHECK(std::isnan(exp_f32(NAN)));
  // Subnormal results are produced, not flushed.
  const float tiny = exp_f32(-100.0f);
  CHECK(tiny > 0.0f);
  CHECK(std::fabs(static_cast<double>(tiny) - std::exp(-100.0)) <= 1.5e-45);
}

TEST_CASE("kernels/portable_math: normal_cdf_f32 within 1e-6 relative") {
  double worst = 0.0, worst_x = 0.0;
  for (int i = -1400000; i <= 1400000; ++i) {
    const float x = static_cast<float>(i) * 1e-5f;
    const double ref = 0.5 * std::erfc(-static_cast<double>(x) / std::sqrt(2.0));
    // Relative above FLT_MIN; in the subnormal range (x < -13.1) absolute.
    const double e = std::fabs(static_cast<double>(normal_cdf_f32(x)) - ref) /
                     (ref > 1.2e-38 ? ref : 1.2e-38);
    if (!(e <= worst)) {
      worst = e;
      worst_x = static_cast<double>(x);
    }
  }
  CAPTURE(worst_x);
  CHECK(worst <= 1e-6);
  CHECK(normal_cdf_f32(0.0f) == 0.5f);
  CHECK(normal_cdf_f32(INFINITY) == 1.0f);
  CHECK(normal_cdf_f32(-INFINITY) == 0.0f);
}

TEST_CASE("kernels/portable_math: log_f64 within 2 ulp of double") {
  double worst = 0.0;
  for (double x : {1.0, 1.0000001, 1.5, 2.0, 2.718281828459045, 3.0, 17.0, 255.5, 1e4, 32000.0,
                   1e30, 1.4142135623730951, 1.4142135623730954, 0.75, 1e-10}) {
    const double ref = std::log(x);
    const double e = std::fabs(log_f64(x) - ref) / (std::fabs(ref) > 1e-300 ? std::fabs(ref) : 1.0);
    worst = e > worst ? e : worst;
  }
  CHECK(worst <= 4.5e-16);
  CHECK(log_f64(1.0) == 0.0);
}

// The softmax normalizer of a row holding a NaN or +inf must not come out
// finite (the search fails such sentences instead of emitting garbage).
TEST_CASE("kernels/portable_math: log_f64 special values as libm") {
  CHECK(std::isnan(log_f64(std::nan(""))));
  CHECK(log_f64(HUGE_VAL) == HUGE_VAL);
  CHECK(log_f64(0.0) == -HUGE_VAL);
  CHECK(std::isnan(log_f64(-1.0)));
  CHECK(std::isnan(log_f64(-HUGE_VAL)));
}

// Error in float ulps at the reference (the ulp of a float near `ref`,
// floored at the smallest normal's).
double ulps(float got, double ref) {
  const double magnitude = std::fabs(ref) > 1.2e-38 ? std::fabs(ref) : 1.2e-38;
  const double ulp = std::ldexp(1.0, std::ilogb(magnitude) - 23);
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

TEST_CASE("kernels/portable_math: tanh_f32 within 3 ulp, odd, saturating") {
  double worst = 0.0, worst_x = 0.0;
  for (int i = -1200000; i <= 1200000; ++i) {
    const float x = static_cast<float>(i) * 1e-5f;
    const double e = ulps(tanh_f32(x), std::tanh(static_cast<double>(x)));
    if (!(e <= worst)) {
      worst = e;
      worst_x = static_cast<double>(x);
    }
  }
  CAPTURE(worst_x);
  CHECK(worst <= 3.0);
  for (float x : {1e-30f, 1e-8f, 3e-3f, 0.5499f, 0.55f, 0.7f, 5.0f}) {
    CHECK(tanh_f32(-x) == -tanh_f32(x));
    CHECK(ulps(tanh_f32(x), std::tanh(static_cast<double>(x))) <= 3.0);
  }
  CHECK(tanh_f32(0.0f) == 0.0f);
  CHECK(tanh_f32(20.0f) == 1.0f);
  CHECK(tanh_f32(-INFINITY) == -1.0f);
  CHECK(tanh_f32(INFINITY) == 1.0f);
  CHECK(std::isnan(tanh_f32(NAN)));
}

TEST_CASE("kernels/portable_math: sigmoid_f32 within 4 ulp") {
  double worst = 0.0, worst_x = 0.0;
  for (int i = -2700000; i <= 1000000; ++i) {  // [-81, 30] (the kernel tests also run under qemu)
    const float x = static_cast<float>(i) * 3e-5f;
    const double e = ulps(sigmoid_f32(x), 1.0 / (1.0 + std::exp(-static_cast<double>(x))));
    if (!(e <= worst)) {
      worst = e;
      worst_x = static_cast<double>(x);
    }
  }
  CAPTURE(worst_x);
  CHECK(worst <= 4.0);
  CHECK(sigmoid_f32(0.0f) == 0.5f);
  CHECK(sigmoid_f32(-200.0f) == 0.0f);
  CHECK(sigmoid_f32(200.0f) == 1.0f);
  CHECK(std::isnan(sigmoid_f32(NAN)));
}

float twice_rounded(float a, float b, float c) {
  return static_cast<float>(static_cast<double>(a) * static_cast<double>(b) + static_cast<double>(c));
}

TEST_CASE("kernels/portable_math: fma_f32 rounds once where double then float rounds wrong") {
  struct Case {
    float a, b, c, fused;
  };
  const float big = std::ldexp(1.0f, 30);
  const float tiny_c = 3.0f * std::ldexp(1.0f, -128) + std::ldexp(1.0f, -149);
  const Case cases[] = {
      // a·b = 2^6 - 2^-40: just below the midpoint c + 2^6; c's last bit is odd
      {1.0f + std::ldexp(1.0f, -23), std::ldexp(1.0f, 6) - std::ldexp(1.0f, -17), big + 128.0f, big + 128.0f},
      // a·b = 2^6 + 2^-30: just above the midpoint; c's last bit is even
      {1.0f + std::ldexp(1.0f, -12), std::ldexp(1.0f - std::ldexp(1.0f, -12) + std::ldexp(1.0f, -24), 6), big,
       big + 128.0f},
      // below 2^-126: a·b = 2^-150 - 2^-190 on a subnormal c with an odd last bit
      {std::ldexp(1.0f + std::ldexp(1.0f, -20), -75), std::ldexp(1.0f - std::ldexp(1.0f, -20), -75), tiny_c, tiny_c},
  };
  for (const Case& k : cases) {
    for (float sign : {1.0f, -1.0f}) {
      CAPTURE(k.c);
      CAPTURE(sign);
      REQUIRE(twice_rounded(sign * k.a, k.b, sign * k.c) != sign * k.fused);  // the case is a hard one
      CHECK(fma_f32(sign * k.a, k.b, sign * k.c) == sign * k.fused);
      CHECK(fma_f32_from_double(sign * k.a, k.b, sign * k.c) == sign * k.fused);
    }
  }
}

#if !defined(__wasm__)
// Natively std::fma is exact: fma_f32_from_double against it on random
// triples and on sums built to land near a rounding midpoint (c of every
// size, subnormals and FLT_MAX included; a·b about half of c's float ulp).
TEST_CASE("kernels/portable_math: fma_f32_from_double equals std::fma") {
  uint64_t state = 0x9E3779B97F4A7C15u;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  auto any_float = [&]() {  // finite, any exponent, either sign
    uint32_t u = static_cast<uint32_t>(next());
    if ((u & 0x7F800000u) == 0x7F800000u) u &= 0xBFFFFFFFu;
    return bits_float(u);
  };
  size_t mismatches = 0, hard = 0;
  for (int i = 0; i < 400000; ++i) {
    float a = any_float(), b = any_float(), c = any_float();
    if (i % 2 == 1) {
      // b = half of c's ulp / a, nudged by up to 3 ulps: a·b near a midpoint.
      const float ulp = std::fabs(std::nextafter(c, INFINITY) - c);
      a = 1.0f + static_cast<float>(next() % 1024) * 0x1p-10f;
      b = static_cast<float>(0.5 * static_cast<double>(ulp) / static_cast<double>(a));
      const int nudge = static_cast<int>(next() % 7) - 3;
      b = bits_float(float_bits(b) + static_cast<uint32_t>(nudge));
      if (next() % 2 == 0) b = -b;
    }
    const float want = std::fma(a, b, c), got = fma_f32_from_double(a, b, c);
    hard += twice_rounded(a, b, c) != want && !std::isnan(want);
    if (!(std::memcmp(&want, &got, sizeof want) == 0 || (std::isnan(want) && std::isnan(got)))) {
      ++mismatches;
      if (mismatches <= 5) {
        CAPTURE(a);
        CAPTURE(b);
        CAPTURE(c);
        CHECK(got == want);
      }
    }
  }
  CAPTURE(hard);
  CHECK(hard > 100);  // the midpoint cases were reached
  CHECK(mismatches == 0);
}
#endif

}  // namespace
}  // namespace edgemt::kernels::math
