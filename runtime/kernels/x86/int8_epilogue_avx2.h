// The float part of the 256-bit int8 kernels (int8_gemm_avx2.cc,
// int8_full_codes_avx2.cc, int8_gemm_avx_vnni.cc, int8_gemm_marian_avx2.cc;
// include only from files compiled with -mavx2) for MR rows × NB blocks of
// int32 sums, 8 columns per half-block (store_dequantized8_avx2: one row's 8):
//   y = float(sum - (offset - shift) · column_sum) · (x_scale · w_scale) + bias,
//   then y > 0 ? y : 0 with ReLU,
// the order of int8_gemm.h, where `offset` is what the kernel added to every
// activation code (64 for the AVX2 kernel's narrow codes, 2 for codes >= -2,
// 127 for Marian's shifted ones, 128 for vpdpbusd's unsigned operand, 0
// otherwise) and shift GemmArgs::sum_shift, less row_offsets[r] when given
// (what a kernel added per row: int8_full_codes_avx2.cc's 128·Σ xq). Stores
// only the block's columns that exist.
// `static`: each kernel file keeps its own copy, compiled for its own target.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/int8_gemm_variants.h"
#include "kernels/x86/avx2_math.h"

namespace edgemt::kernels::int8 {

// One row's 8 columns from n: y = float(sum - correction) · (x_scale · w_scale)
// + bias (ReLU if asked), the first `count` of them stored.
static inline void store_dequantized8_avx2(const GemmArgs& a, size_t m, size_t n, __m256i sum,
                                           __m256i correction, __m256 w_scale, __m256 bias,
                                           size_t count) {
  const __m256 exact = _mm256_cvtepi32_ps(_mm256_sub_epi32(sum, correction));
  const __m256 scale = _mm256_mul_ps(_mm256_set1_ps(a.x_scale[m]), w_scale);
  __m256 y = _mm256_add_ps(_mm256_mul_ps(exact, scale), bias);
  if (a.relu) y = _mm256_max_ps(y, _mm256_setzero_ps());  // NaN -> 0, -0 -> +0, as portable
  avx2::store_first(a.y + m * a.y_stride + n, count, y);
}

template <int MR, int NB>
static inline void store_dequantized_avx2(const GemmArgs& a, size_t m0, size_t b0,
                                          const int32_t (&sums)[MR][NB][2][8], int32_t offset,
                                          const int32_t* row_offsets = nullptr) {
  const PackedWeights& w = *a.weights;
  const int32_t multiplier = offset - a.sum_shift;  // exact: |Σ_k w| <= 127·K
  for (int nb = 0; nb < NB; ++nb) {
    const size_t n0 = (b0 + nb) * kBlockColumns;
    const size_t width = w.columns - n0 < kBlockColumns ? w.columns - n0 : kBlockColumns;
    for (int h = 0; h < 2; ++h) {
      const size_t n = n0 + 8 * h;
      const __m256 w_scale = _mm256_load_ps(w.scale + n);
      const __m256 bias = _mm256_load_ps(w.bias + n);
      const __m256i column_sum = _mm256_load_si256(reinterpret_cast<const __m256i*>(w.column_sum + n));
      const __m256i correction = multiplier == 0
                                     ? _mm256_setzero_si256()
                                     : _mm256_mullo_epi32(column_sum, _mm256_set1_epi32(multiplier));
      const size_t count = width > 8 * static_cast<size_t>(h) ? width - 8 * h : 0;
      for (int r = 0; r < MR; ++r) {
        const __m256i sum = _mm256_load_si256(reinterpret_cast<const __m256i*>(sums[r][nb][h]));
        const __m256i row_correction =
            row_offsets == nullptr ? correction
                                   : _mm256_add_epi32(correction, _mm256_set1_epi32(row_offsets[r]));
        store_dequantized8_avx2(a, m0 + r, n, sum, row_correction, w_scale, bias, count);
      }
    }
  }
}

}  // namespace edgemt::kernels::int8
