// row_magnitudes and quantize_row (row_codes.h) with AVX-512: 16 weights at
// a time, the portable variants' operations on each, so the same bits.
// The sums' 16 lanes are two registers of 8 doubles; a short last chunk is
// read with zeros in the missing lanes, which add nothing (+0 to a sum of
// magnitudes, never -0) and miss by nothing.
#include "kernels/row_codes.h"
#include "kernels/x86/avx512_math.h"  // <immintrin.h>, GCC 12's warnings about it off

namespace edgemt::kernels {
namespace {

__mmask16 chunk_mask(size_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}

// The upper 8 floats of v.
__m256 upper_half(__m512 v) { return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)); }

// The largest of a register's 8 lanes (none is NaN).
double max_lanes(__m512d a) {
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, a);
  double best = lanes[0];
  for (double lane : lanes) best = lane > best ? lane : best;
  return best;
}

}  // namespace

void row_magnitudes_avx512(const float* w, size_t depth, float* largest, double* sum) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
  __m512 most = _mm512_setzero_ps();
  __m512d low = _mm512_setzero_pd();   // lanes 0-7
  __m512d high = _mm512_setzero_pd();  // lanes 8-15
  for (size_t k = 0; k < depth; k += 16) {
    const __m512 x = _mm512_maskz_loadu_ps(chunk_mask(depth - k), w + k);
    const __m512 magnitude = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), abs_mask));
    most = _mm512_max_ps(magnitude, most);  // magnitude > most ? magnitude : most
    low = _mm512_add_pd(low, _mm512_cvtps_pd(_mm512_castps512_ps256(magnitude)));
    high = _mm512_add_pd(high, _mm512_cvtps_pd(upper_half(magnitude)));
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, most);
  float best = 0.0f;
  for (float lane : lanes) best = lane > best ? lane : best;
  const __m512d eight = _mm512_add_pd(low, high);                       // j + 8
  const __m256d four = _mm256_add_pd(_mm512_castpd512_pd256(eight), _mm512_extractf64x4_pd(eight, 1));
  const __m128d two = _mm_add_pd(_mm256_castpd256_pd128(four), _mm256_extractf128_pd(four, 1));
  *largest = best;
  *sum = _mm_cvtsd_f64(_mm_add_sd(two, _mm_unpackhi_pd(two, two)));
}

double quantize_row_avx512(const float* w, size_t depth, float s, float inverse, int8_t* codes) {
  const __m512 shifter = _mm512_set1_ps(12582912.0f);  // 1.5·2^23
  const __m512 scale_inverse = _mm512_set1_ps(inverse);
  const __m512 top = _mm512_set1_ps(127.0f);
  const __m512 bottom = _mm512_set1_ps(-127.0f);
  const __m512d scale = _mm512_set1_pd(static_cast<double>(s));
  const __m512i abs_mask = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFLL);
  __m512d error = _mm512_setzero_pd();
  for (size_t k = 0; k < depth; k += 16) {
    const __mmask16 mask = chunk_mask(depth - k);
    const __m512 x = _mm512_maskz_loadu_ps(mask, w + k);
    const __m512 rounded = _mm512_sub_ps(_mm512_add_ps(_mm512_mul_ps(x, scale_inverse), shifter), shifter);
    const __m512 code = _mm512_min_ps(_mm512_max_ps(rounded, bottom), top);
    _mm512_mask_cvtepi32_storeu_epi8(codes + k, mask, _mm512_cvtps_epi32(code));
    for (int half = 0; half < 2; ++half) {
      const __m256 x8 = half == 0 ? _mm512_castps512_ps256(x) : upper_half(x);
      const __m256 code8 = half == 0 ? _mm512_castps512_ps256(code) : upper_half(code);
      const __m512d miss = _mm512_sub_pd(_mm512_cvtps_pd(x8), _mm512_mul_pd(scale, _mm512_cvtps_pd(code8)));
      const __m512d magnitude = _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(miss), abs_mask));
      error = _mm512_max_pd(magnitude, error);
    }
  }
  return max_lanes(error);
}

}  // namespace edgemt::kernels
