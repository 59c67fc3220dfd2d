// The zero-skipping int8 GEMM (int8_gemm_sparse.h) with AVX-512 VNNI: one
// row at a time over a group of up to 8 blocks. The row's groups of 4 codes
// that are not all zero are listed 16 at a time (a test into a mask); each
// goes into vpdpbusd as unsigned codes + 128 (the sign bit flipped), and a
// second vpdpbusd of 128s takes that shift's 128·Σ w of the same group out
// again: exact int32 sums of only the groups that add something. The float
// part is the portable kernel's, column by column.
#include <immintrin.h>

#include <cstdint>

#include "kernels/int8_gemm_sparse.h"
#include "kernels/int8_gemm_variants.h"
#include "kernels/row_groups.h"
#include "kernels/x86/nonzero_list.h"

namespace edgemt::kernels::int8 {
namespace {

constexpr size_t kGroupBlocks = 8;  // 128 columns

template <size_t kBlocks>
void row_group(const GemmArgs& a, size_t m, size_t b0) {
  const PackedWeights& w = *a.weights;
  const size_t groups = w.groups;
  const size_t step = groups * kGroupBytes;  // bytes between blocks
  const int8_t* block = w.blocks + b0 * step;
  __m512i shifted[kBlocks], shift[kBlocks];  // Σ (x + 128)·w and Σ 128·w
  for (size_t j = 0; j < kBlocks; ++j) shifted[j] = shift[j] = _mm512_setzero_si512();
  const __m512i ones128 = _mm512_set1_epi32(static_cast<int32_t>(0x80808080u));
  const int8_t* xr = a.xq + m * a.xq_stride;
  // The row's groups that are not all zero, listed a slice at a time
  // (x86/nonzero_list.h).
  auto nonzero = [xr](size_t g0, size_t end) { return x86::nonzero_code_groups16(xr, g0, end); };
  x86::for_each_listed<16>(groups, nonzero, [&](size_t g) {
    const __m512i xg =
        _mm512_set1_epi32(static_cast<int32_t>(load_group(xr + g * kGroupDepth) ^ 0x80808080u));
    const int8_t* wg = block + g * kGroupBytes;
    for (size_t j = 0; j < kBlocks; ++j) {
      const __m512i wv = _mm512_load_si512(wg + j * step);
      shifted[j] = _mm512_dpbusd_epi32(shifted[j], xg, wv);
      shift[j] = _mm512_dpbusd_epi32(shift[j], ones128, wv);
    }
  });
  alignas(64) int32_t sums[kBlocks * kBlockColumns];
  for (size_t j = 0; j < kBlocks; ++j) {
    _mm512_store_si512(sums + j * kBlockColumns, _mm512_sub_epi32(shifted[j], shift[j]));
  }
  dequantize_row(a, m, b0 * kBlockColumns, sums, kBlocks * kBlockColumns);
}

using RowGroup = void (*)(const GemmArgs&, size_t, size_t);
constexpr RowGroup kRowGroups[kGroupBlocks] = {row_group<1>, row_group<2>, row_group<3>,
                                               row_group<4>, row_group<5>, row_group<6>,
                                               row_group<7>, row_group<8>};

}  // namespace

void sparse_gemm_avx512_vnni(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_row_groups(a, first_block, block_count, kRowGroups);
}

}  // namespace edgemt::kernels::int8
