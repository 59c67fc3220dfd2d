// Int8 GEMM on NEON with the ARMv8.2 dot product (compiled with
// -march=armv8.2-a+dotprod; chosen when HWCAP says ASIMDDP, e.g. Cortex-A76).
//
// SDOT multiplies signed bytes, 4 per 32-bit lane, so no offset is needed.
// A packed group (16 columns × 4 depth) is four 128-bit registers of 4
// columns each; 16 activation bytes (4 groups) are loaded at once and each
// group is picked by lane (vdotq_laneq_s32).
//
// Tiles: MR rows × NB blocks with MR·NB <= 4: 16 accumulators.
#include <arm_neon.h>

#include "kernels/arm/int8_epilogue_neon.h"
#include "kernels/int8_gemm_variants.h"

namespace edgemt::kernels::int8 {
namespace {

// Accumulates group `Lane` of the 16 activation bytes in xv[r] against the
// group's weights at `group` (4 registers per block).
template <int MR, int NB, int Lane>
inline void dot_group(int32x4_t (&sum)[MR][NB][4], const int8x16_t (&xv)[MR],
                      const int8_t* group, size_t block_stride) {
  for (int nb = 0; nb < NB; ++nb) {
    int8x16_t wv[4];
    for (int q = 0; q < 4; ++q) wv[q] = vld1q_s8(group + nb * block_stride + 16 * q);
    for (int r = 0; r < MR; ++r) {
      for (int q = 0; q < 4; ++q) sum[r][nb][q] = vdotq_laneq_s32(sum[r][nb][q], wv[q], xv[r], Lane);
    }
  }
}

template <int MR, int NB>
void tile(const GemmArgs& a, size_t m0, size_t b0) {
  const PackedWeights& w = *a.weights;
  const size_t block_stride = w.groups * kGroupBytes;
  const int8_t* block = w.blocks + b0 * block_stride;
  int32x4_t sum[MR][NB][4];
  for (int r = 0; r < MR; ++r) {
    for (int nb = 0; nb < NB; ++nb) {
      for (int q = 0; q < 4; ++q) sum[r][nb][q] = vdupq_n_s32(0);
    }
  }
  const int8_t* x = a.xq + m0 * a.xq_stride;
  size_t g = 0;
  for (; g + 4 <= w.groups; g += 4) {
    int8x16_t xv[MR];
    for (int r = 0; r < MR; ++r) xv[r] = vld1q_s8(x + r * a.xq_stride + g * kGroupDepth);
    const int8_t* group = block + g * kGroupBytes;
    dot_group<MR, NB, 0>(sum, xv, group, block_stride);
    dot_group<MR, NB, 1>(sum, xv, group + kGroupBytes, block_stride);
    dot_group<MR, NB, 2>(sum, xv, group + 2 * kGroupBytes, block_stride);
    dot_group<MR, NB, 3>(sum, xv, group + 3 * kGroupBytes, block_stride);
  }
  for (; g < w.groups; ++g) {  // last 1-3 groups: one group in every lane
    int8x16_t xv[MR];
    for (int r = 0; r < MR; ++r) {
      xv[r] = vreinterpretq_s8_u32(vdupq_n_u32(load_group(x + r * a.xq_stride + g * kGroupDepth)));
    }
    dot_group<MR, NB, 0>(sum, xv, block + g * kGroupBytes, block_stride);
  }
  for (int nb = 0; nb < NB; ++nb) {
    const size_t n0 = (b0 + nb) * kBlockColumns;
    const size_t width = w.columns - n0 < kBlockColumns ? w.columns - n0 : kBlockColumns;
    for (int q = 0; q < 4 && 4 * static_cast<size_t>(q) < width; ++q) {
      const size_t n = n0 + 4 * q;
      for (int r = 0; r < MR; ++r) {
        store_dequantized_neon(sum[r][nb][q], a.x_scale[m0 + r], w.scale + n, w.bias + n,
                               w.column_sum + n, a.sum_shift, a.relu,
                               a.y + (m0 + r) * a.y_stride + n, width - 4 * q);
      }
    }
  }
}

constexpr TileFunction kTiles[4][4] = {
    {tile<1, 1>, tile<1, 2>, tile<1, 3>, tile<1, 4>},
    {tile<2, 1>, tile<2, 2>, nullptr, nullptr},
    {tile<3, 1>, nullptr, nullptr, nullptr},
    {tile<4, 1>, nullptr, nullptr, nullptr},
};
constexpr size_t kMaxBlocks[4] = {4, 2, 1, 1};  // per row count: MR·NB <= 4

}  // namespace

void gemm_neon_dotprod(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_tiles(a, first_block, block_count, kTiles, kMaxBlocks);
}

}  // namespace edgemt::kernels::int8
