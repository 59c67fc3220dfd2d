// The zero-skipping int8 GEMM (int8_gemm_sparse.h) with AVX2: one row at a
// time over a group of up to 4 blocks. The row's groups of 4 codes that are
// not all zero are listed 8 at a time (a compare and its sign bits); each
// multiplies its block rows by the sign trick (|x| unsigned times w with
// x's sign, vpmaddubsw: pairs at most 2·127·127, exact; vpmaddwd by ones
// into int32): exact int32 sums of only the groups that add something. A
// row with no negative code (a ReLU's output, the rows this kernel is for)
// gives vpmaddubsw its codes as they are, without vpsignb: 2 of the 3
// operations per 32 multiply-adds on Zen's two multiply pipes instead of 3
// of 4. The float part is the portable kernel's, column by column.
#include <immintrin.h>

#include <cstdint>

#include "kernels/int8_gemm_sparse.h"
#include "kernels/int8_gemm_variants.h"
#include "kernels/row_groups.h"
#include "kernels/x86/avx2_math.h"
#include "kernels/x86/code_floor_avx2.h"
#include "kernels/x86/nonzero_list.h"

namespace edgemt::kernels::int8 {
namespace {

constexpr size_t kGroupBlocks = 4;  // 64 columns

template <size_t kBlocks, bool kNonnegative>
void row_group_of(const GemmArgs& a, size_t m, size_t b0) {
  const PackedWeights& w = *a.weights;
  const size_t groups = w.groups;
  const size_t step = groups * kGroupBytes;  // bytes between blocks
  const int8_t* block = w.blocks + b0 * step;
  __m256i acc[kBlocks][2];  // columns 0-7 and 8-15 of each block
  for (size_t j = 0; j < kBlocks; ++j) acc[j][0] = acc[j][1] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i zero = _mm256_setzero_si256();
  const int8_t* xr = a.xq + m * a.xq_stride;
  // The row's groups that are not all zero, listed a slice at a time
  // (x86/nonzero_list.h).
  auto nonzero = [xr, zero](size_t g0, size_t end) {
    const size_t lanes_here = end - g0 < 8 ? end - g0 : 8;
    const int32_t* lanes = reinterpret_cast<const int32_t*>(xr + g0 * kGroupDepth);
    const __m256i v = lanes_here == 8 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes))
                                      : _mm256_maskload_epi32(lanes, avx2::tail_mask(lanes_here));
    const unsigned zeros = static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, zero))));
    return ~zeros & ((1u << lanes_here) - 1u);
  };
  x86::for_each_listed<8>(groups, nonzero, [&](size_t g) {
    const __m256i xg = _mm256_set1_epi32(static_cast<int32_t>(load_group(xr + g * kGroupDepth)));
    const __m256i x_abs = kNonnegative ? xg : _mm256_abs_epi8(xg);
    const int8_t* wg = block + g * kGroupBytes;
    for (size_t j = 0; j < kBlocks; ++j) {
      for (size_t h = 0; h < 2; ++h) {
        const __m256i wv = _mm256_load_si256(reinterpret_cast<const __m256i*>(wg + j * step + h * 32));
        const __m256i pairs =
            _mm256_maddubs_epi16(x_abs, kNonnegative ? wv : _mm256_sign_epi8(wv, xg));
        acc[j][h] = _mm256_add_epi32(acc[j][h], _mm256_madd_epi16(pairs, ones));
      }
    }
  });
  alignas(32) int32_t sums[kBlocks * kBlockColumns];
  for (size_t j = 0; j < kBlocks; ++j) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(sums + j * kBlockColumns), acc[j][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(sums + j * kBlockColumns + 8), acc[j][1]);
  }
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
                                               row_group<4>};

}  // namespace

void sparse_gemm_avx2(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_row_groups(a, first_block, block_count, kRowGroups);
}

}  // namespace edgemt::kernels::int8
