// The zero-skipping int8 GEMM (int8_gemm_sparse.h) with AVX-512 without
// VNNI (Skylake-SP/X): one row at a time over a group of up to 8 blocks.
// The row's groups of 4 codes that are not all zero are listed 16 at a time
// (a test into a mask); each multiplies its block rows as the AVX-512 BW
// dense kernel's sign step does (|x| unsigned times w with x's sign, one
// masked subtract; vpmaddubsw pairs at most 2·127·127, exact; vpmaddwd by
// ones into int32): exact int32 sums of only the groups that add something.
// A row with no negative code (a ReLU's output, the rows this kernel is
// for) gives vpmaddubsw its codes as they are: 3 operations per 64
// multiply-adds, where the AVX2 kernel, which ran here before, takes 3 per
// 32. The float part is the portable kernel's, column by column.
#include <cstdint>

#include "kernels/int8_gemm_sparse.h"
#include "kernels/int8_gemm_variants.h"
#include "kernels/row_groups.h"
#include "kernels/x86/code_floor_avx2.h"
#include "kernels/x86/int8_parts_avx512.h"
#include "kernels/x86/nonzero_list.h"

namespace edgemt::kernels::int8 {
namespace {

constexpr size_t kGroupBlocks = 8;  // 128 columns

template <size_t kBlocks, bool kNonnegative>
void row_group_of(const GemmArgs& a, size_t m, size_t b0) {
  const PackedWeights& w = *a.weights;
  const size_t groups = w.groups;
  const size_t step = groups * kGroupBytes;  // bytes between blocks
  const int8_t* block = w.blocks + b0 * step;
  __m512i acc[kBlocks];
  for (size_t j = 0; j < kBlocks; ++j) acc[j] = _mm512_setzero_si512();
  const __m512i ones = _mm512_set1_epi16(1);
  const __m512i zero = _mm512_setzero_si512();
  const int8_t* xr = a.xq + m * a.xq_stride;
  // The row's groups that are not all zero, listed a slice at a time
  // (x86/nonzero_list.h).
  auto nonzero = [xr](size_t g0, size_t end) { return x86::nonzero_code_groups16(xr, g0, end); };
  x86::for_each_listed<16>(groups, nonzero, [&](size_t g) {
    const __m512i xg = _mm512_set1_epi32(static_cast<int32_t>(load_group(xr + g * kGroupDepth)));
    // Lanes whose code is negative: the group's 4 codes broadcast like the
    // weights' 4-deep groups, so the mask lines up with them.
    const __mmask64 negative = kNonnegative ? 0 : _mm512_movepi8_mask(xg);
    const __m512i x_abs = kNonnegative ? xg : _mm512_abs_epi8(xg);
    const int8_t* wg = block + g * kGroupBytes;
    for (size_t j = 0; j < kBlocks; ++j) {
      const __m512i wv = _mm512_load_si512(wg + j * step);
      const __m512i signed_w = kNonnegative ? wv : _mm512_mask_sub_epi8(wv, negative, zero, wv);
      acc[j] = _mm512_add_epi32(acc[j], _mm512_madd_epi16(_mm512_maddubs_epi16(x_abs, signed_w), ones));
    }
  });
  alignas(64) int32_t sums[kBlocks * kBlockColumns];
  for (size_t j = 0; j < kBlocks; ++j) _mm512_store_si512(sums + j * kBlockColumns, acc[j]);
  dequantize_row(a, m, b0 * kBlockColumns, sums, kBlocks * kBlockColumns);
}

template <size_t kBlocks>
void row_group(const GemmArgs& a, size_t m, size_t b0) {
  if (codes_at_least(a.xq + m * a.xq_stride, a.xq_stride, 0)) {
    row_group_of<kBlocks, true>(a, m, b0);
  } else {
    row_group_of<kBlocks, false>(a, m, b0);
  }
}

using RowGroup = void (*)(const GemmArgs&, size_t, size_t);
constexpr RowGroup kRowGroups[kGroupBlocks] = {row_group<1>, row_group<2>, row_group<3>,
                                               row_group<4>, row_group<5>, row_group<6>,
                                               row_group<7>, row_group<8>};

}  // namespace

void sparse_gemm_avx512bw(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_row_groups(a, first_block, block_count, kRowGroups);
}

}  // namespace edgemt::kernels::int8
