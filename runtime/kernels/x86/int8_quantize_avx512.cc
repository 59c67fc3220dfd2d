// The activation quantizer's two parts (quantize_with) with AVX-512 F and
// BW, 16 values at a time: max|x| of a row and its codes, the portable
// loops' bits. Compiled without VNNI, so that CPUs with AVX-512 but not
// VNNI (Skylake-SP/X) run them too: perf of int8 batch-32 greedy there (an
// Intel Xeon, cpu family 6 model 167, as EDGEMT_CPU_FEATURES=avx512bw):
// AVX2's, 8 at a time, 5.7% of the run; these 4.0% (the max 3.0 -> 1.2%).
#include "kernels/x86/intrinsics.h"  // first: see there

#include "kernels/int8_gemm_variants.h"

namespace edgemt::kernels::int8 {
namespace {

// The 16 values from row + k the quantizer works on: x, or x · multiplier
// (one float32 product, as quantize_rows), in full or masked to a tail.
inline __m512 load16(const float* row, const float* multiplier, size_t k) {
  const __m512 v = _mm512_loadu_ps(row + k);
  return multiplier != nullptr ? _mm512_mul_ps(v, _mm512_loadu_ps(multiplier + k)) : v;
}
inline __m512 load16_tail(const float* row, const float* multiplier, size_t k, __mmask16 tail) {
  const __m512 v = _mm512_maskz_loadu_ps(tail, row + k);
  return multiplier != nullptr ? _mm512_mul_ps(v, _mm512_maskz_loadu_ps(tail, multiplier + k)) : v;
}

}  // namespace

// max|value| of a row on the bit patterns, as the portable loop (inf/NaN
// largest; masked-off lanes load 0, which changes no max).
uint32_t row_max_bits_avx512(const float* row, size_t depth, const float* multiplier) {
  const size_t full = depth / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (depth - full)) - 1u);
  const __m512i magnitude = _mm512_set1_epi32(0x7FFFFFFF);
  __m512i max_bits = _mm512_and_si512(_mm512_castps_si512(load16_tail(row, multiplier, full, tail)),
                                      magnitude);
  for (size_t k = 0; k < full; k += 16) {
    max_bits = _mm512_max_epu32(max_bits,
                                _mm512_and_si512(_mm512_castps_si512(load16(row, multiplier, k)), magnitude));
  }
  return _mm512_reduce_max_epu32(max_bits);
}

// One row's codes with `inverse_value` (quantize_with), quantize_rows' bits.
void quantize_row_avx512(const float* row, size_t depth, int32_t limit, const float* multiplier,
                         float inverse_value, int8_t* q) {
  const size_t full = depth / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (depth - full)) - 1u);
  const __m512 inverse = _mm512_set1_ps(inverse_value);
  const __m512 high = _mm512_set1_ps(static_cast<float>(limit));
  const __m512 low = _mm512_set1_ps(-static_cast<float>(limit));
  auto convert = [&](__m512 v) {
    // Nearest, ties to even (what the portable 1.5·2^23 trick does), clamped.
    v = _mm512_roundscale_ps(_mm512_mul_ps(v, inverse), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_max_ps(_mm512_min_ps(v, high), low)));
  };
  size_t k = 0;
  for (; k < full; k += 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + k), convert(load16(row, multiplier, k)));
  }
  if (k < depth) _mm_mask_storeu_epi8(q + k, tail, convert(load16_tail(row, multiplier, k, tail)));
  for (size_t p = depth; p < padded_depth(depth); ++p) q[p] = 0;
}

}  // namespace edgemt::kernels::int8
