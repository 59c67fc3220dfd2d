// Whether a row of int8 activation codes stays at or above a floor, for the
// AVX2 int8 kernels that skip the sign step on a ReLU's codes (include only
// from files compiled with -mavx2): int8_full_codes_avx2.cc (codes >= 0 go
// in as they are, codes >= -2 as xq + 2), int8_gemm_sparse_avx2.cc and
// int8_gemm_marian_avx2.cc (codes >= 0 as they are).
// `static`: each kernel file keeps its own copy, compiled for its own target.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/int8_gemm_variants.h"

namespace edgemt::kernels::int8 {

// Whether every code of row[0, count) is >= lowest (count is a multiple of
// kGroupDepth; a quantized row's padding past its depth is zeros). A row
// with a lower code usually returns at its first 32.
static inline bool codes_at_least(const int8_t* row, size_t count, int8_t lowest) {
  const __m256i floor = _mm256_set1_epi8(lowest);
  size_t k = 0;
  for (; k + 32 <= count; k += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + k));
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi8(floor, v)) != 0) return false;
  }
  for (; k < count; k += kGroupDepth) {  // the last 4-28 codes
    const __m256i v = _mm256_set1_epi32(static_cast<int>(load_group(row + k)));
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi8(floor, v)) != 0) return false;
  }
  return true;
}

}  // namespace edgemt::kernels::int8
