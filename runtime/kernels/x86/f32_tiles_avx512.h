// A part shared by the AVX-512 f32 tiles: the dense GEMM's
// (f32_gemm_avx512.cc) and the zero-skipping kernel's shared tiles
// (f32_gemm_sparse_avx512.cc).
#pragma once

#include <immintrin.h>

#include <cstddef>

#include "kernels/f32_gemm.h"

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

}  // namespace edgemt::kernels::f32
