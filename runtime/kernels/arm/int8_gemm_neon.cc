// Int8 GEMM on baseline AArch64 NEON (no dot product: Cortex-A53/A72 and
// the like).
//
// SMULL multiplies 8 signed byte pairs into 16-bit products (|127·127| fits)
// and SADALP adds neighbouring products into 32-bit accumulators, so every
// sum stays exact. A 128-bit register of the packed group holds 4 columns ×
// 4 depth; the group's 4 activation bytes are repeated across the register.
// Each column ends as two partial sums (depth 0-1 and 2-3) which a final
// pairwise add joins.
//
// Tiles: MR <= 2 rows × one block (8 accumulators per row).
#include <arm_neon.h>

#include "kernels/arm/int8_epilogue_neon.h"
#include "kernels/int8_gemm_variants.h"

namespace edgemt::kernels::int8 {
namespace {

template <int MR>
void tile(const GemmArgs& a, size_t m0, size_t b) {
  const PackedWeights& w = *a.weights;
  const int8_t* block = w.blocks + b * w.groups * kGroupBytes;
  // partial[r][q][h]: columns 4q..4q+3; h = 0 holds columns 4q, 4q+1, h = 1
  // columns 4q+2, 4q+3, each as (depth 0-1, depth 2-3) pairs.
  int32x4_t partial[MR][4][2];
  for (int r = 0; r < MR; ++r) {
    for (int q = 0; q < 4; ++q) partial[r][q][0] = partial[r][q][1] = vdupq_n_s32(0);
  }
  const int8_t* x = a.xq + m0 * a.xq_stride;
  for (size_t g = 0; g < w.groups; ++g) {
    int8x16_t xv[MR];
    for (int r = 0; r < MR; ++r) {
      xv[r] = vreinterpretq_s8_u32(vdupq_n_u32(load_group(x + r * a.xq_stride + g * kGroupDepth)));
    }
    const int8_t* group = block + g * kGroupBytes;
    for (int q = 0; q < 4; ++q) {
      const int8x16_t wv = vld1q_s8(group + 16 * q);
      for (int r = 0; r < MR; ++r) {
        partial[r][q][0] = vpadalq_s16(partial[r][q][0], vmull_s8(vget_low_s8(wv), vget_low_s8(xv[r])));
        partial[r][q][1] = vpadalq_s16(partial[r][q][1], vmull_high_s8(wv, xv[r]));
      }
    }
  }
  const size_t n0 = b * kBlockColumns;
  const size_t width = w.columns - n0 < kBlockColumns ? w.columns - n0 : kBlockColumns;
  for (int q = 0; q < 4 && 4 * static_cast<size_t>(q) < width; ++q) {
    const size_t n = n0 + 4 * q;
    for (int r = 0; r < MR; ++r) {
      const int32x4_t sum = vpaddq_s32(partial[r][q][0], partial[r][q][1]);
      store_dequantized_neon(sum, a.x_scale[m0 + r], w.scale + n, w.bias + n, w.column_sum + n,
                             a.sum_shift, a.relu, a.y + (m0 + r) * a.y_stride + n, width - 4 * q);
    }
  }
}

}  // namespace

void gemm_neon(const GemmArgs& a, size_t first_block, size_t block_count) {
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    size_t m = 0;
    for (; m + 2 <= a.rows; m += 2) tile<2>(a, m, b);
    if (m < a.rows) tile<1>(a, m, b);
  }
}

}  // namespace edgemt::kernels::int8
