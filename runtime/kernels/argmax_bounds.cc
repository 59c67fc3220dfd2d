#include "kernels/argmax_bounds.h"

#include <cmath>

#include "core/cpu_features.h"
#include "kernels/portable_vectors.h"

namespace edgemt::kernels {

float argmax_upper_bounds_portable(const float* max_error, const float* l1, const float* abs_bias,
                                   const ArgmaxBoundFactors& f, float widening, size_t n,
                                   float* approx, bool* infinite) {
  // Four ids at a time in GCC's portable vectors (SSE2 or NEON): the same
  // operations in the same order as the scalar tail, so the same bits, at a
  // quarter of a scalar loop's time. A lane compares as its scalar would:
  // NaN (banned) never raises the threshold.
  Floats4 threshold4;
  Ints4 infinite4;
  for (int l = 0; l < 4; ++l) {
    threshold4[l] = -INFINITY;
    infinite4[l] = 0;
  }
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const Floats4 a = load_floats4(approx + i);
    const Floats4 magnitude = abs4(a);
    const Floats4 b = (load_floats4(max_error + i) * f.error + load_floats4(l1 + i) * f.l1 +
                       load_floats4(abs_bias + i) * f.bias + magnitude * f.approx) *
                      widening;
    const Ints4 b_bits = reinterpret_cast<Ints4>(b) & kAbsMask;
    infinite4 |= (reinterpret_cast<Ints4>(magnitude) == kInfBits) | (b_bits == kInfBits);
    const Floats4 low = a - b;
    threshold4 = low > threshold4 ? low : threshold4;
    store_floats4(approx + i, a + b);
  }
  // The lanes' maximum (any order: +0 and -0 compare equal wherever used).
  float threshold = -INFINITY;
  for (int l = 0; l < 4; ++l) threshold = threshold4[l] > threshold ? threshold4[l] : threshold;
  bool any_infinite = any_lane(infinite4);
  for (; i < n; ++i) {
    const float a = approx[i];
    const float b = argmax_bound(max_error[i], l1[i], abs_bias[i], f, widening, a);
    any_infinite |= std::isinf(a) || std::isinf(b);  // NaN: banned
    const float low = a - b;
    threshold = low > threshold ? low : threshold;
    approx[i] = a + b;
  }
  *infinite = any_infinite;
  return threshold;
}

float argmax_upper_bounds(const float* max_error, const float* l1, const float* abs_bias,
                          const ArgmaxBoundFactors& f, float widening, size_t n, float* approx,
                          bool* infinite) {
#if defined(__x86_64__)
  if (cpu_features().avx512) {
    return argmax_upper_bounds_avx512(max_error, l1, abs_bias, f, widening, n, approx, infinite);
  }
  if (cpu_features().avx2) {
    return argmax_upper_bounds_avx2(max_error, l1, abs_bias, f, widening, n, approx, infinite);
  }
#endif
  return argmax_upper_bounds_portable(max_error, l1, abs_bias, f, widening, n, approx, infinite);
}

}  // namespace edgemt::kernels
