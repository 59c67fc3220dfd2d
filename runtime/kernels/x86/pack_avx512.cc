// Packing 16 whole rows into the GEMMs' column blocks with AVX-512: both
// layouts are 16 columns × 32-bit words (f32: a float per depth step;
// int8: a group of 4 depth steps' bytes), so 16 rows' 16 words at a time
// are transposed in registers (the portable loops move one word at a time).
// The same bytes moved, so the same packs.
//   f32::pack_rows_block_avx512: pack_block (f32_gemm.h) of stride-1 rows;
//     the depth's last steps past a multiple of 16 as the portable loop.
//   int8::pack_groups_avx512: the whole groups of an int8 block
//     (int8_gemm.cc's pack_block does the rest).
#include "kernels/f32_gemm.h"
#include "kernels/int8_gemm_variants.h"
#include "kernels/x86/pack_tails.h"
#include "kernels/x86/avx512_math.h"  // <immintrin.h>, GCC 12's warnings about it off

namespace edgemt::kernels {

namespace f32 {

void pack_rows_block_avx512(const float* const* lanes, size_t depth, float* block) {
  size_t k = 0;
  for (; k + kBlockColumns <= depth; k += kBlockColumns) {
    __m512 r[16];
    for (size_t c = 0; c < kBlockColumns; ++c) r[c] = _mm512_loadu_ps(lanes[c] + k);
    avx512::transpose16(r);
    for (size_t i = 0; i < kBlockColumns; ++i) _mm512_storeu_ps(block + (k + i) * kBlockColumns, r[i]);
  }
  pack_tails::copy_f32_steps(lanes, k, depth, block);
}

}  // namespace f32

namespace int8 {

void pack_groups_avx512(const int8_t* rows, size_t depth, size_t groups, int8_t* out,
                        int32_t* sums, int8_t* lows) {
  // A packed group is one register: dword lane c holds column c's 4 bytes,
  // so the columns' sums (4 bytes to one int32 per lane: maddubs with ones,
  // then madd with ones) and minima (bytewise) add up lane by lane.
  const __m512i ones8 = _mm512_set1_epi8(1);
  const __m512i ones16 = _mm512_set1_epi16(1);
  __m512i sum = _mm512_setzero_si512();
  __m512i low = _mm512_setzero_si512();
  auto add = [&](__m512i group) {
    sum = _mm512_add_epi32(sum, _mm512_madd_epi16(_mm512_maddubs_epi16(ones8, group), ones16));
    low = _mm512_min_epi8(low, group);
  };
  size_t g = 0;
  for (; g + kBlockColumns <= groups; g += kBlockColumns) {
    __m512 r[16];
    for (size_t c = 0; c < kBlockColumns; ++c) {
      r[c] = _mm512_castsi512_ps(_mm512_loadu_si512(rows + c * depth + g * kGroupDepth));
    }
    avx512::transpose16(r);
    for (size_t i = 0; i < kBlockColumns; ++i) {
      const __m512i group = _mm512_castps_si512(r[i]);
      _mm512_storeu_si512(out + (g + i) * kGroupBytes, group);
      add(group);
    }
  }
  for (; g < groups; ++g) {
    pack_tails::copy_int8_group(rows, depth, g, out);
    add(_mm512_loadu_si512(out + g * kGroupBytes));
  }
  _mm512_storeu_si512(sums, sum);
  alignas(64) int8_t bytes[kGroupBytes];
  _mm512_store_si512(bytes, low);
  pack_tails::least_of_lanes(bytes, lows);
}

}  // namespace int8
}  // namespace edgemt::kernels
