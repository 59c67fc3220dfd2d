// What the 512-bit int8 kernels (int8_gemm_avx512_vnni.cc,
// int8_gemm_avx512bw.cc; include only from files compiled with -mavx512f
// -mavx512bw) share: the intrinsics, the per-chunk pass over a row's codes
// and the float epilogue.
// `static`: each kernel file keeps its own copy, compiled for its own target.
#pragma once

#include "kernels/x86/intrinsics.h"  // first: see there

#include <cstddef>
#include <cstdint>

#include "kernels/int8_gemm_variants.h"

namespace edgemt::kernels::int8 {

// Groups of depth per chunk a tile prepares its rows' codes for: 1 KiB per
// row on the stack.
constexpr size_t kChunkGroupsAvx512 = 256;

// out[i] = op(bytes[i]) for i < count (a multiple of kGroupDepth), 64 codes
// at a time: a tile's rows' codes made into the operand its products take,
// once per chunk rather than once per broadcast.
template <typename Op>
static inline void map_codes_avx512(const int8_t* bytes, size_t count, int8_t* out, Op op) {
  size_t i = 0;
  for (; i + 64 <= count; i += 64) _mm512_store_si512(out + i, op(_mm512_loadu_si512(bytes + i)));
  if (i < count) {
    const __mmask64 tail = (~0ULL) >> (64 - (count - i));
    _mm512_mask_storeu_epi8(out + i, tail, op(_mm512_maskz_loadu_epi8(tail, bytes + i)));
  }
}

// The float part for MR rows × NB blocks of exact int32 sums held in
// registers:
//   y = float(sum - (offset - shift) · column_sum) · (x_scale · w_scale) + bias,
//   then y > 0 ? y : 0 with ReLU,
// the order of int8_gemm.h, where `offset` is what the kernel added to every
// activation code (128 for vpdpbusd's unsigned operand, 2 for the AVX-512
// BW kernel's ReLU codes, 0 otherwise) and shift GemmArgs::sum_shift.
// Stores only the block's columns that exist.
// Every loop is unrolled, as the kernels' own (GCC 12 otherwise kept the
// accumulator array in memory).
template <int MR, int NB>
static inline __attribute__((always_inline)) void store_dequantized_avx512(
    const GemmArgs& a, size_t m0, size_t b0, const __m512i (&sum)[MR][NB], int32_t offset) {
  const PackedWeights& w = *a.weights;
  const __m512 zero = _mm512_setzero_ps();
  const int32_t multiplier = offset - a.sum_shift;  // exact: |Σ_k w| <= 127·K
  #pragma GCC unroll 4
  for (int nb = 0; nb < NB; ++nb) {
    const size_t n0 = (b0 + nb) * kBlockColumns;
    const __m512i correction =
        multiplier == 0 ? _mm512_setzero_si512()
                        : _mm512_mullo_epi32(_mm512_load_si512(w.column_sum + n0),
                                             _mm512_set1_epi32(multiplier));
    const __m512 w_scale = _mm512_load_ps(w.scale + n0);
    const __m512 bias = _mm512_load_ps(w.bias + n0);
    const size_t width = w.columns - n0 < kBlockColumns ? w.columns - n0 : kBlockColumns;
    const __mmask16 mask = static_cast<__mmask16>((1u << width) - 1u);
    #pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
      const __m512 exact = _mm512_cvtepi32_ps(_mm512_sub_epi32(sum[r][nb], correction));
      const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(a.x_scale[m0 + r]), w_scale);
      __m512 y = _mm512_add_ps(_mm512_mul_ps(exact, scale), bias);
      // max(y, 0) keeps the portable y > 0 ? y : 0 (NaN -> 0, -0 -> +0).
      if (a.relu) y = _mm512_max_ps(y, zero);
      _mm512_mask_storeu_ps(a.y + (m0 + r) * a.y_stride + n0, mask, y);
    }
  }
}

}  // namespace edgemt::kernels::int8
