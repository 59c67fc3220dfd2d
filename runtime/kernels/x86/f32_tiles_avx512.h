// The parts shared by the AVX-512 f32 tiles: the dense GEMM's
// (f32_gemm_avx512.cc) and the zero-skipping kernel's shared tiles
// (f32_gemm_sparse_avx512.cc): their start and their end.
#pragma once

#include <immintrin.h>

#include <cstddef>

#include "kernels/f32_gemm.h"
#include "kernels/x86/avx512_math.h"

namespace edgemt::kernels::f32 {

// acc[r][j] = the bias of block b0 + j, for every row r: a tile's sums
// before its first term. Static: TUs built with other -m flags may define
// their own.
template <size_t kRows, size_t kBlocks>
static inline void start_from_bias(const PackedWeights& w, size_t b0, __m512 (&acc)[kRows][kBlocks]) {
  for (size_t j = 0; j < kBlocks; ++j) {
    const __m512 bias = _mm512_load_ps(w.bias + (b0 + j) * kBlockColumns);
    for (size_t r = 0; r < kRows; ++r) acc[r][j] = bias;
  }
}

// Rows [m0, m0 + kRows) of y on blocks [b0, b0 + kBlocks): acc clamped
// (XNNPACK's clamp: max_ps(acc, low) is acc > low ? acc : low; low 0 under
// a fused ReLU, else -inf) and stored, columns past N left untouched.
template <size_t kRows, size_t kBlocks>
static inline void store_clamped(const GemmArgs& a, size_t m0, size_t b0, __m512 (&acc)[kRows][kBlocks]) {
  const __m512 low = _mm512_set1_ps(a.relu ? 0.0f : -__builtin_huge_valf());
  for (size_t j = 0; j < kBlocks; ++j) {
    for (size_t r = 0; r < kRows; ++r) acc[r][j] = _mm512_max_ps(acc[r][j], low);
  }
  for (size_t j = 0; j < kBlocks; ++j) {
    const size_t n0 = (b0 + j) * kBlockColumns;
    const __mmask16 store = avx512::tail_mask(a.weights->columns - n0);
    for (size_t r = 0; r < kRows; ++r) {
      _mm512_mask_storeu_ps(a.y + (m0 + r) * a.y_stride + n0, store, acc[r][j]);
    }
  }
}

}  // namespace edgemt::kernels::f32
