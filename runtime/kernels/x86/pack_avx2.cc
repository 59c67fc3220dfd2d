// Packing 16 whole rows into the GEMMs' column blocks with AVX2 (as
// pack_avx512.cc, which says why both layouts are transposes of 32-bit
// words): 8 words of 16 rows at a time, as two 8 × 8 squares (columns 0-7
// and 8-15 of each 64-byte line). The same bytes moved, so the same packs.
//   f32::pack_rows_block_avx2: the depth's last steps past a multiple of 8
//     as the portable loop.
//   int8::pack_groups_avx2: the whole groups of an int8 block.
#include <immintrin.h>

#include "kernels/f32_gemm.h"
#include "kernels/int8_gemm_variants.h"
#include "kernels/x86/avx2_math.h"
#include "kernels/x86/pack_tails.h"

namespace edgemt::kernels {

namespace f32 {

void pack_rows_block_avx2(const float* const* lanes, size_t depth, float* block) {
  constexpr size_t kSteps = 8;
  size_t k = 0;
  for (; k + kSteps <= depth; k += kSteps) {
    for (size_t half = 0; half < 2; ++half) {  // columns 0-7, then 8-15
      __m256 r[8];
      for (size_t c = 0; c < 8; ++c) r[c] = _mm256_loadu_ps(lanes[half * 8 + c] + k);
      avx2::transpose8(r);
      for (size_t i = 0; i < kSteps; ++i) _mm256_storeu_ps(block + (k + i) * kBlockColumns + half * 8, r[i]);
    }
  }
  pack_tails::copy_f32_steps(lanes, k, depth, block);
}

}  // namespace f32

namespace int8 {

void pack_groups_avx2(const int8_t* rows, size_t depth, size_t groups, int8_t* out,
                      int32_t* sums, int8_t* lows) {
  // As pack_groups_avx512: a group is two registers (columns 0-7, 8-15),
  // dword lane c of each holding a column's 4 bytes.
  constexpr size_t kWords = 8;
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  __m256i sum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  __m256i low[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  auto add = [&](size_t half, __m256i words) {
    sum[half] = _mm256_add_epi32(sum[half], _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, words), ones16));
    low[half] = _mm256_min_epi8(low[half], words);
  };
  size_t g = 0;
  for (; g + kWords <= groups; g += kWords) {
    for (size_t half = 0; half < 2; ++half) {  // columns 0-7, then 8-15
      __m256 r[8];
      for (size_t c = 0; c < 8; ++c) {
        const int8_t* from = rows + (half * 8 + c) * depth + g * kGroupDepth;
        r[c] = _mm256_castsi256_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(from)));
      }
      avx2::transpose8(r);
      for (size_t i = 0; i < kWords; ++i) {
        int8_t* to = out + (g + i) * kGroupBytes + half * 8 * kGroupDepth;
        const __m256i words = _mm256_castps_si256(r[i]);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), words);
        add(half, words);
      }
    }
  }
  for (; g < groups; ++g) {
    pack_tails::copy_int8_group(rows, depth, g, out);
    for (size_t half = 0; half < 2; ++half) {
      add(half, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out + g * kGroupBytes + half * 32)));
    }
  }
  alignas(32) int8_t bytes[kGroupBytes];
  for (size_t half = 0; half < 2; ++half) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + half * 8), sum[half]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(bytes + half * 32), low[half]);
  }
  pack_tails::least_of_lanes(bytes, lows);
}

}  // namespace int8
}  // namespace edgemt::kernels
