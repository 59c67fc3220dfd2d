// argmax_upper_bounds (argmax_bounds.h) with AVX-512: sixteen ids at a time,
// the portable pass's operations in its order (products, then the sums left
// to right, then the widening; no FMA), so the same A + B bits. The
// maximum keeps its running value where A - B is NaN (vmaxps returns its
// second operand then), as the portable comparison does. The portable
// 4-lane pass was 3-5% of a tiny11 batch-32 greedy run with a shortlist
// (perf), once the shortcut ran over the candidates.
#include <cmath>

#include "kernels/argmax_bounds.h"
#include "kernels/x86/avx512_math.h"  // <immintrin.h>, GCC 12's warnings about it off

namespace edgemt::kernels {

float argmax_upper_bounds_avx512(const float* max_error, const float* l1, const float* abs_bias,
                                 const ArgmaxBoundFactors& f, float widening, size_t n,
                                 float* approx, bool* infinite) {
  const __m512 error = _mm512_set1_ps(f.error);
  const __m512 l1_factor = _mm512_set1_ps(f.l1);
  const __m512 bias = _mm512_set1_ps(f.bias);
  const __m512 approx_factor = _mm512_set1_ps(f.approx);
  const __m512 widen = _mm512_set1_ps(widening);
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
  const __m512i inf_bits = _mm512_set1_epi32(0x7F800000);
  __m512 threshold16 = _mm512_set1_ps(-INFINITY);
  __mmask16 infinite16 = 0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 a = _mm512_loadu_ps(approx + i);
    const __m512i magnitude_bits = _mm512_and_si512(_mm512_castps_si512(a), abs_mask);
    const __m512 magnitude = _mm512_castsi512_ps(magnitude_bits);
    __m512 b = _mm512_mul_ps(_mm512_loadu_ps(max_error + i), error);
    b = _mm512_add_ps(b, _mm512_mul_ps(_mm512_loadu_ps(l1 + i), l1_factor));
    b = _mm512_add_ps(b, _mm512_mul_ps(_mm512_loadu_ps(abs_bias + i), bias));
    b = _mm512_add_ps(b, _mm512_mul_ps(magnitude, approx_factor));
    b = _mm512_mul_ps(b, widen);
    const __m512i b_bits = _mm512_and_si512(_mm512_castps_si512(b), abs_mask);
    infinite16 |= _mm512_cmpeq_epi32_mask(magnitude_bits, inf_bits) |
                  _mm512_cmpeq_epi32_mask(b_bits, inf_bits);
    threshold16 = _mm512_max_ps(_mm512_sub_ps(a, b), threshold16);
    _mm512_storeu_ps(approx + i, _mm512_add_ps(a, b));
  }
  // The lanes' maximum (no lane is NaN; any order: +0 and -0 are equal
  // wherever it is used).
  float lanes[16];
  _mm512_storeu_ps(lanes, threshold16);
  float threshold = -INFINITY;
  for (float lane : lanes) threshold = lane > threshold ? lane : threshold;
  bool any_infinite = infinite16 != 0;
  // The last n % 16 ids as the portable pass's scalar tail.
  bool tail_infinite = false;
  const float tail = argmax_upper_bounds_portable(max_error + i, l1 + i, abs_bias + i, f, widening,
                                                  n - i, approx + i, &tail_infinite);
  *infinite = any_infinite || tail_infinite;
  return tail > threshold ? tail : threshold;
}

}  // namespace edgemt::kernels
