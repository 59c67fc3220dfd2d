// row_magnitudes and quantize_row (row_codes.h) with AVX2, for x86 CPUs
// without AVX-512: 16 weights at a time (two registers), the portable
// variants' operations on each, so the same bits. The sums' 16 lanes are
// four registers of 4 doubles. A short last chunk is read with zeros in the
// missing lanes, which add nothing (+0 to a sum of magnitudes, never -0)
// and miss by nothing; its codes go through a buffer.
#include <immintrin.h>

#include <cstring>

#include "kernels/row_codes.h"
#include "kernels/x86/avx2_math.h"

namespace edgemt::kernels {
namespace {

// w[k..k+16) with zeros past `left` weights.
void load16(const float* w, size_t left, __m256* low, __m256* high) {
  if (left >= 16) {
    *low = _mm256_loadu_ps(w);
    *high = _mm256_loadu_ps(w + 8);
    return;
  }
  *low = _mm256_maskload_ps(w, avx2::tail_mask(left));
  *high = left > 8 ? _mm256_maskload_ps(w + 8, avx2::tail_mask(left - 8)) : _mm256_setzero_ps();
}

__m256 abs8(__m256 x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }

// 8 int32s in [-127, 127] to 8 int16s in order (the pack saturates nothing).
__m128i words(__m256i v) { return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)); }

}  // namespace

void row_magnitudes_avx2(const float* w, size_t depth, float* largest, double* sum) {
  __m256 most_low = _mm256_setzero_ps(), most_high = _mm256_setzero_ps();
  __m256d sums[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
  for (size_t k = 0; k < depth; k += 16) {
    __m256 low, high;
    load16(w + k, depth - k, &low, &high);
    low = abs8(low);
    high = abs8(high);
    most_low = _mm256_max_ps(low, most_low);  // magnitude > most ? magnitude : most
    most_high = _mm256_max_ps(high, most_high);
    sums[0] = _mm256_add_pd(sums[0], _mm256_cvtps_pd(_mm256_castps256_ps128(low)));    // lanes 0-3
    sums[1] = _mm256_add_pd(sums[1], _mm256_cvtps_pd(_mm256_extractf128_ps(low, 1)));  // 4-7
    sums[2] = _mm256_add_pd(sums[2], _mm256_cvtps_pd(_mm256_castps256_ps128(high)));   // 8-11
    sums[3] = _mm256_add_pd(sums[3], _mm256_cvtps_pd(_mm256_extractf128_ps(high, 1))); // 12-15
  }
  alignas(32) float lanes[16];
  _mm256_store_ps(lanes, most_low);
  _mm256_store_ps(lanes + 8, most_high);
  float best = 0.0f;
  for (float lane : lanes) best = lane > best ? lane : best;
  // j + 8, then j + 4, j + 2, j + 1.
  const __m256d four = _mm256_add_pd(_mm256_add_pd(sums[0], sums[2]), _mm256_add_pd(sums[1], sums[3]));
  const __m128d two = _mm_add_pd(_mm256_castpd256_pd128(four), _mm256_extractf128_pd(four, 1));
  *largest = best;
  *sum = _mm_cvtsd_f64(_mm_add_sd(two, _mm_unpackhi_pd(two, two)));
}

double quantize_row_avx2(const float* w, size_t depth, float s, float inverse, int8_t* codes) {
  const __m256 shifter = _mm256_set1_ps(12582912.0f);  // 1.5·2^23
  const __m256 scale_inverse = _mm256_set1_ps(inverse);
  const __m256 top = _mm256_set1_ps(127.0f);
  const __m256 bottom = _mm256_set1_ps(-127.0f);
  const __m256d scale = _mm256_set1_pd(static_cast<double>(s));
  const __m256d sign = _mm256_set1_pd(-0.0);
  __m256d error = _mm256_setzero_pd();
  for (size_t k = 0; k < depth; k += 16) {
    __m256 x[2];
    load16(w + k, depth - k, &x[0], &x[1]);
    __m256i whole[2];
    for (int half = 0; half < 2; ++half) {
      const __m256 rounded =
          _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(x[half], scale_inverse), shifter), shifter);
      const __m256 code = _mm256_min_ps(_mm256_max_ps(rounded, bottom), top);
      whole[half] = _mm256_cvtps_epi32(code);
      for (int quarter = 0; quarter < 2; ++quarter) {
        const __m128 x4 = quarter == 0 ? _mm256_castps256_ps128(x[half]) : _mm256_extractf128_ps(x[half], 1);
        const __m128 code4 = quarter == 0 ? _mm256_castps256_ps128(code) : _mm256_extractf128_ps(code, 1);
        const __m256d miss = _mm256_sub_pd(_mm256_cvtps_pd(x4), _mm256_mul_pd(scale, _mm256_cvtps_pd(code4)));
        error = _mm256_max_pd(_mm256_andnot_pd(sign, miss), error);
      }
    }
    const __m128i bytes = _mm_packs_epi16(words(whole[0]), words(whole[1]));  // 16 codes in order
    if (depth - k >= 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + k), bytes);
    } else {
      alignas(16) int8_t tail[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(tail), bytes);
      std::memcpy(codes + k, tail, depth - k);
    }
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, error);
  double best = lanes[0];
  for (double lane : lanes) best = lane > best ? lane : best;
  return best;
}

}  // namespace edgemt::kernels
