// Elementary functions for the kernels, written out in plain float/double
// arithmetic (internal header; kernels only).
//
// Why not <cmath>: libm's expf/erff/log are not guaranteed to give the same
// bits on x86-64 and AArch64 (glibc builds them with FMA on ARM), and a call
// to libm in a loop stops GCC from vectorizing it. These versions use only
// +, -, *, /, comparisons and integer bit operations in a fixed order, so
// they give identical results on every IEEE-754 target — provided the build
// does not contract a*b+c into FMA (build with -ffp-contract=off: GCC
// contracts by default even in ISO C++ mode, and AArch64 always has FMA) and
// the FPU is in its default mode (round to nearest, no flush-to-zero). They are branch-free so that loops calling
// them vectorize at -O3.
//
// Accuracy (measured by the kernel tests against double precision):
//   exp_f32            <= 2 ulp on [-87, 88]; 0 below -104, +inf above 89
//   normal_cdf_f32     <= ~1e-6 relative (the GELU gate Phi(x))
//   log_f64            ~1 ulp of double (used once per softmax row)
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace edgemt::kernels::math {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// c ? a : b as a bit blend. A float `?:` lets GCC fold constants into the two
// arms and turn it back into a branch, and with -ftrapping-math (the default)
// it will not if-convert arithmetic in branches, so the loop would not
// vectorize; the integer blend always vectorizes.
inline float select(bool c, float a, float b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(c);
  return bits_float((float_bits(a) & mask) | (float_bits(b) & ~mask));
}

// e^x in float. Cody-Waite reduction x = n·ln2 + r with |r| <= ln2/2, a
// degree-6 polynomial for e^r, then scaling by 2^n in two steps
// (2^(n/2) · 2^(n - n/2)) so that results in the subnormal range and the
// overflow boundary come out right without special cases.
inline float exp_f32(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;      // 9 significant bits: n·kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;   // ln2 - kLn2Hi
  constexpr float kShifter = 12582912.0f;     // 1.5·2^23: adding it rounds to an integer
  constexpr float kMinX = -104.0f;            // e^-104 < 2^-150: rounds to 0
  constexpr float kMaxX = 89.0f;              // e^89 > FLT_MAX: overflows to inf

  // Clamp so that n stays in [-150, 129]; a NaN passes through both selects.
  float xc = select(x < kMinX, kMinX, x);
  xc = select(xc > kMaxX, kMaxX, xc);

  const float t = xc * kLog2e + kShifter;
  const float n = t - kShifter;  // round-to-nearest(x·log2e), exact
  // The integer n sits in the low mantissa bits of t (two's complement
  // around the shifter's bit pattern).
  const int32_t ni = static_cast<int32_t>(float_bits(t) - float_bits(kShifter));

  float r = xc - n * kLn2Hi;
  r = r - n * kLn2Lo;

  // e^r = 1 + r + r²·P(r), P fitted on |r| <= ln2/2 (Taylor-like, minimax-adjusted).
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r;
  p = p + 1.0f;

  // 2^n = 2^n1 · 2^n2 with n1, n2 in [-75, 65]: both normal floats.
  const int32_t n1 = ni / 2;
  const int32_t n2 = ni - n1;
  const float s1 = bits_float(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = bits_float(static_cast<uint32_t>(n2 + 127) << 23);
  float y = (p * s1) * s2;
  y = select(x < kMinX, 0.0f, y);  // exactly 0 for -inf and far below
  return y;
}

// Phi(x) = P(N(0,1) <= x) = 0.5·erfc(-x/sqrt(2)), the gate of exact GELU.
//
// For a = |x|: 0.5·erfc(a/sqrt2) = t·P(t)·e^(-a²/2) with t = 1/(1 + 0.3a);
// P is our degree-9 least-squares fit in relative error on a in [0, 14.5]
// (max 4e-9 in exact arithmetic, ~4e-7 evaluated in float). Computing the
// tail directly (not as 1 - erf) keeps Phi relatively accurate for very
// negative x, where GELU is tiny. e^(-a²/2) is evaluated as
// e^(-ah²/2)·e^(-al(a+ah)/2) with ah = a with 12 mantissa bits, so that ah²
// is exact: otherwise the rounding of a² alone costs ~a²·6e-8 relative.
inline float normal_cdf_f32(float x) {
  // a = min(|x|, 20): Phi(-20) ~ 3e-89 is 0 in float, and the clamp keeps
  // ah - a finite for |x| = inf. A NaN x stays NaN.
  const float abs_x = bits_float(float_bits(x) & 0x7FFFFFFFu);
  const float a = select(abs_x > 20.0f, 20.0f, abs_x);
  const float t = 1.0f / (1.0f + 0.3f * a);
  float p = -0.020861368626356125f;
  p = p * t + 0.113714799284935f;
  p = p * t + -0.23118485510349274f;
  p = p * t + 0.19568747282028198f;
  p = p * t + -0.0826098844408989f;
  p = p * t + 0.09782875329256058f;
  p = p * t + 0.07782744616270065f;
  p = p * t + 0.11035193502902985f;
  p = p * t + 0.11955834180116653f;
  p = p * t + 0.11968734860420227f;
  p = p * t;

  const float ah = bits_float(float_bits(a) & 0xFFFFF000u);
  const float al = a - ah;
  const float e = exp_f32(-0.5f * (ah * ah)) * exp_f32(-0.5f * (al * (a + ah)));
  const float tail = p * e;  // 0.5·erfc(a/sqrt2)
  const float upper = 1.0f - tail;
  return select(x < 0.0f, tail, upper);
}

// The logistic function 1 / (1 + e^-x), as torch's sigmoid computes it
// (e^-x = inf below x = -89 gives 0).
inline float sigmoid_f32(float x) { return 1.0f / (1.0f + exp_f32(-x)); }

// tanh in float. |x| < 0.55: the odd Taylor series to x^19 (the next term
// is below 1e-9 relative there: no cancellation near 0, where tanh x ~ x);
// beyond: 1 - 2 / (e^2|x| + 1) with the sign put back (exactly 1 once
// e^2|x| is large or inf). Error <= 3 ulp against double (kernel tests).
inline float tanh_f32(float x) {
  const float a = select(x < 0.0f, -x, x);
  const float a2 = a * a;
  float series = -443861162.0f / 1856156927625.0f;
  series = series * a2 + 6404582.0f / 10854718875.0f;
  series = series * a2 - 929569.0f / 638512875.0f;
  series = series * a2 + 21844.0f / 6081075.0f;
  series = series * a2 - 1382.0f / 155925.0f;
  series = series * a2 + 62.0f / 2835.0f;
  series = series * a2 - 17.0f / 315.0f;
  series = series * a2 + 2.0f / 15.0f;
  series = series * a2 - 1.0f / 3.0f;
  series = a + a * (series * a2);
  const float far = 1.0f - 2.0f / (exp_f32(2.0f * a) + 1.0f);
  const float t = select(a < 0.55f, series, far);
  // -t for negative x; NaN passes through (a NaN compares false).
  return select(x < 0.0f, -t, t);
}

// Natural log in double (one call per softmax row, so scalar is fine).
// x = m·2^e with m in [sqrt(1/2), sqrt2); ln m via the atanh series
// 2(s + s³/3 + ...) with s = (m-1)/(m+1), |s| <= 0.172, summed to s^23
// (remainder < 1e-18). Special values as libm: NaN and +inf are returned as
// they are (the bit decomposition would read them as finite numbers near
// 2^1024 and answer ~710, turning an overflowed softmax row into a finite
// normalizer), 0 gives -inf, x < 0 NaN. Subnormals are not handled (the
// callers' x is a sum of exponentials with one term equal to 1).
inline double log_f64(double x) {
  if (!(x > 0.0) || x == __builtin_huge_val()) {
    return x == 0.0 ? -__builtin_huge_val() : (x < 0.0 ? __builtin_nan("") : x);
  }
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  int32_t e = static_cast<int32_t>((u >> 52) & 0x7FF) - 1023;
  u = (u & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;  // m in [1, 2)
  double m;
  std::memcpy(&m, &u, sizeof m);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    e += 1;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double sum = 1.0 / 23.0;
  for (int k = 21; k >= 1; k -= 2) sum = sum * s2 + 1.0 / k;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // exact times any int32 e
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const double de = static_cast<double>(e);
  return (de * kLn2Hi + 2.0 * s * sum) + de * kLn2Lo;
}

// The value of float bits u as a double, with the infinity bits read as
// 2^128: the next step of the float grid past FLT_MAX (for the rounding
// midpoint at overflow).
inline double grid_value(uint32_t u) {
  if ((u & 0x7FFFFFFFu) == 0x7F800000u) return (u >> 31) != 0 ? -0x1p128 : 0x1p128;
  return static_cast<double>(bits_float(u));
}

// fma(a, b, c) in float, rounded once, from double arithmetic (WebAssembly
// has no fused multiply-add). The product a·b is exact in double (24 + 24
// bits); s = a·b + c rounds once in double and float(s) once more. That
// second rounding is wrong only when s lands exactly halfway between two
// floats (rounding is monotone and a double holds every midpoint, so s
// cannot cross one) while the exact sum does not: then the exact sum's side
// is the sign of the double sum's error e (TwoSum: s + e = a·b + c exactly).
inline float fma_f32_from_double(float a, float b, float c) {
  const double p = static_cast<double>(a) * static_cast<double>(b);
  const double s = p + static_cast<double>(c);
  const float r = static_cast<float>(s);
  if (!(s - s == 0.0)) return r;  // inf or NaN: nothing was rounded twice
  const double t = s - p;
  const double e = (p - (s - t)) + (static_cast<double>(c) - t);
  const uint32_t u = float_bits(r);
  const double rd = grid_value(u);
  if (e == 0.0 || s == rd) return r;
  // The float next to r on s's side (r = 0 -> the smallest subnormal of s's
  // sign; r = inf -> FLT_MAX), and their midpoint.
  const bool s_beyond_r = (s > rd) == (s > 0.0);  // |s| > |r|
  const uint32_t other = s_beyond_r ? u + 1 : u - 1;
  const double od = grid_value(other);
  if (s != 0.5 * (rd + od)) return r;
  return (e > 0.0) == (od > rd) ? bits_float(other) : r;
}

// fma(a, b, c) in float, one rounding, on every target: std::fma natively
// (an instruction, or an exact libm call); fma_f32_from_double in
// WebAssembly, where emscripten 3.1.6's fmaf rounds twice.
inline float fma_f32(float a, float b, float c) {
#if defined(__wasm__)
  return fma_f32_from_double(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

}  // namespace edgemt::kernels::math
