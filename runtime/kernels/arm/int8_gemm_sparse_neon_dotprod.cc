// The zero-skipping int8 GEMM (int8_gemm_sparse.h) with the ARMv8.2 dot
// product (compiled with -march=armv8.2-a+dotprod; beside the dense
// gemm_neon_dotprod): one row at a time over a group of up to 4 blocks (16
// accumulators of 4 columns). Each group of 4 codes that is not all zero is
// broadcast to every lane and SDOT adds its products to every block's 16
// columns: exact int32 sums of only the groups that add something. The
// float part is the portable kernel's, column by column. (Checked under
// qemu; not timed on ARM hardware.)
#include <arm_neon.h>

#include <cstdint>

#include "kernels/int8_gemm_sparse.h"
#include "kernels/int8_gemm_variants.h"
#include "kernels/row_groups.h"

namespace edgemt::kernels::int8 {
namespace {

constexpr size_t kGroupBlocks = 4;  // 64 columns

template <size_t kBlocks>
void row_group(const GemmArgs& a, size_t m, size_t b0) {
  const PackedWeights& w = *a.weights;
  const size_t groups = w.groups;
  const size_t step = groups * kGroupBytes;  // bytes between blocks
  const int8_t* block = w.blocks + b0 * step;
  int32x4_t sum[kBlocks][4];  // 4 columns each
  for (size_t j = 0; j < kBlocks; ++j) {
    for (size_t q = 0; q < 4; ++q) sum[j][q] = vdupq_n_s32(0);
  }
  const int8_t* xr = a.xq + m * a.xq_stride;
  for (size_t g = 0; g < groups; ++g) {
    const uint32_t codes = load_group(xr + g * kGroupDepth);
    if (codes == 0) continue;
    const int8x16_t xg = vreinterpretq_s8_u32(vdupq_n_u32(codes));
    const int8_t* wg = block + g * kGroupBytes;
    for (size_t j = 0; j < kBlocks; ++j) {
      for (size_t q = 0; q < 4; ++q) {
        sum[j][q] = vdotq_s32(sum[j][q], vld1q_s8(wg + j * step + 16 * q), xg);
      }
    }
  }
  int32_t sums[kBlocks * kBlockColumns];
  for (size_t j = 0; j < kBlocks; ++j) {
    for (size_t q = 0; q < 4; ++q) vst1q_s32(sums + j * kBlockColumns + 4 * q, sum[j][q]);
  }
  dequantize_row(a, m, b0 * kBlockColumns, sums, kBlocks * kBlockColumns);
}

using RowGroup = void (*)(const GemmArgs&, size_t, size_t);
constexpr RowGroup kRowGroups[kGroupBlocks] = {row_group<1>, row_group<2>, row_group<3>,
                                               row_group<4>};

}  // namespace

void sparse_gemm_neon_dotprod(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_row_groups(a, first_block, block_count, kRowGroups);
}

}  // namespace edgemt::kernels::int8
