// argmax_upper_bounds (argmax_bounds.h) with AVX2: eight ids at a time,
// the portable pass's operations in its order (products, then the sums left
// to right, then the widening; no FMA), so the same A + B bits. The
// maximum keeps its running value where A - B is NaN (vmaxps returns its
// second operand then), as the portable comparison does. For CPUs without
// AVX-512: the portable 4-lane pass was 2% of a tiny11 batch-32 greedy run
// with a shortlist on the AVX2 kernels (perf, AMD cpu family 26).
#include <immintrin.h>

#include <cmath>

#include "kernels/argmax_bounds.h"

namespace edgemt::kernels {

float argmax_upper_bounds_avx2(const float* max_error, const float* l1, const float* abs_bias,
                               const ArgmaxBoundFactors& f, float widening, size_t n,
                               float* approx, bool* infinite) {
  const __m256 error = _mm256_set1_ps(f.error);
  const __m256 l1_factor = _mm256_set1_ps(f.l1);
  const __m256 bias = _mm256_set1_ps(f.bias);
  const __m256 approx_factor = _mm256_set1_ps(f.approx);
  const __m256 widen = _mm256_set1_ps(widening);
  const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF);
  const __m256i inf_bits = _mm256_set1_epi32(0x7F800000);
  __m256 threshold8 = _mm256_set1_ps(-INFINITY);
  __m256i infinite8 = _mm256_setzero_si256();  // all ones in a lane that saw one
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 a = _mm256_loadu_ps(approx + i);
    const __m256i magnitude_bits = _mm256_and_si256(_mm256_castps_si256(a), abs_mask);
    const __m256 magnitude = _mm256_castsi256_ps(magnitude_bits);
    __m256 b = _mm256_mul_ps(_mm256_loadu_ps(max_error + i), error);
    b = _mm256_add_ps(b, _mm256_mul_ps(_mm256_loadu_ps(l1 + i), l1_factor));
    b = _mm256_add_ps(b, _mm256_mul_ps(_mm256_loadu_ps(abs_bias + i), bias));
    b = _mm256_add_ps(b, _mm256_mul_ps(magnitude, approx_factor));
    b = _mm256_mul_ps(b, widen);
    const __m256i b_bits = _mm256_and_si256(_mm256_castps_si256(b), abs_mask);
    infinite8 = _mm256_or_si256(infinite8,
                                _mm256_or_si256(_mm256_cmpeq_epi32(magnitude_bits, inf_bits),
                                                _mm256_cmpeq_epi32(b_bits, inf_bits)));
    threshold8 = _mm256_max_ps(_mm256_sub_ps(a, b), threshold8);
    _mm256_storeu_ps(approx + i, _mm256_add_ps(a, b));
  }
  // The lanes' maximum (no lane is NaN; any order: +0 and -0 are equal
  // wherever it is used).
  float lanes[8];
  _mm256_storeu_ps(lanes, threshold8);
  float threshold = -INFINITY;
  for (float lane : lanes) threshold = lane > threshold ? lane : threshold;
  const bool any_infinite = !_mm256_testz_si256(infinite8, infinite8);
  // The last n % 8 ids as the portable pass's.
  bool tail_infinite = false;
  const float tail = argmax_upper_bounds_portable(max_error + i, l1 + i, abs_bias + i, f, widening,
                                                  n - i, approx + i, &tail_infinite);
  *infinite = any_infinite || tail_infinite;
  return tail > threshold ? tail : threshold;
}

}  // namespace edgemt::kernels
