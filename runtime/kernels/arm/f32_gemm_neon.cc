// The f32 GEMM (f32_gemm.h) on AArch64 NEON: accumulators started from the
// bias, one fused multiply-add (FMLA) per row and depth step in k order, so
// every output has the portable kernel's bits (math::fma_f32 per step). GCC does
// not vectorize the portable loop on AArch64: it emits 16 scalar FMADDs per
// depth step, a quarter of what the vector unit does.
//
// A block of 16 columns is four 4-lane registers. Tiles are one row × up to
// 4 blocks (batch 1: four weight streams in flight, 16 accumulators) or up
// to 3 rows × 2 blocks (24 accumulators; the two blocks' weights stay in
// cache while the rows pass), of the 32 vector registers.
#include <arm_neon.h>

#include <cstring>

#include "kernels/f32_gemm.h"

namespace edgemt::kernels::f32 {
namespace {

constexpr size_t kLanes = 4;
constexpr size_t kVectors = kBlockColumns / kLanes;  // registers per block

// kRows × kBlocks blocks of outputs from row m0, block b0.
template <size_t kRows, size_t kBlocks>
void tile(const GemmArgs& a, size_t m0, size_t b0) {
  const PackedWeights& w = *a.weights;
  const size_t depth = w.depth;
  const size_t step = depth * kBlockColumns;  // floats between blocks
  const float* block = w.blocks + b0 * step;
  float32x4_t acc[kRows][kBlocks][kVectors];
  for (size_t j = 0; j < kBlocks; ++j) {
    const float* bias = w.bias + (b0 + j) * kBlockColumns;
    for (size_t v = 0; v < kVectors; ++v) {
      const float32x4_t b = vld1q_f32(bias + v * kLanes);
      for (size_t r = 0; r < kRows; ++r) acc[r][j][v] = b;
    }
  }
  const float* x = a.x + m0 * a.x_stride;
  for (size_t k = 0; k < depth; ++k) {
    float32x4_t xr[kRows];
    for (size_t r = 0; r < kRows; ++r) xr[r] = vdupq_n_f32(x[r * a.x_stride + k]);
    for (size_t j = 0; j < kBlocks; ++j) {
      const float* wk = block + j * step + k * kBlockColumns;
      for (size_t v = 0; v < kVectors; ++v) {
        const float32x4_t wv = vld1q_f32(wk + v * kLanes);
        // acc + x · w, fused: std::fma(x, w, acc).
        for (size_t r = 0; r < kRows; ++r) acc[r][j][v] = vfmaq_f32(acc[r][j][v], xr[r], wv);
      }
    }
  }
  // The portable clamp acc > low ? acc : low (a NaN sum becomes low, as on
  // x86; FMAX would keep the NaN).
  const float32x4_t low = vdupq_n_f32(a.relu ? 0.0f : -__builtin_huge_valf());
  for (size_t j = 0; j < kBlocks; ++j) {
    const size_t n0 = (b0 + j) * kBlockColumns;
    const size_t width = w.columns - n0 < kBlockColumns ? w.columns - n0 : kBlockColumns;
    for (size_t r = 0; r < kRows; ++r) {
      float out[kBlockColumns];
      for (size_t v = 0; v < kVectors; ++v) {
        const float32x4_t s = acc[r][j][v];
        vst1q_f32(out + v * kLanes, vbslq_f32(vcgtq_f32(s, low), s, low));
      }
      std::memcpy(a.y + (m0 + r) * a.y_stride + n0, out, width * sizeof(float));
    }
  }
}

using TileFunction = void (*)(const GemmArgs&, size_t m0, size_t b0);
constexpr TileFunction kRowTiles[4] = {tile<1, 1>, tile<1, 2>, tile<1, 3>, tile<1, 4>};  // [blocks - 1]
constexpr TileFunction kTiles[3][2] = {  // [rows - 1][blocks - 1]
    {tile<1, 1>, tile<1, 2>}, {tile<2, 1>, tile<2, 2>}, {tile<3, 1>, tile<3, 2>}};

}  // namespace

void gemm_neon(const GemmArgs& a, size_t first_block, size_t block_count) {
  const size_t end = first_block + block_count;
  if (a.rows == 1) {
    for (size_t b = first_block; b < end; b += 4) kRowTiles[(end - b < 4 ? end - b : 4) - 1](a, 0, b);
    return;
  }
  for (size_t b = first_block; b < end; b += 2) {
    const size_t blocks = end - b < 2 ? end - b : 2;
    for (size_t m = 0; m < a.rows; m += 3) {
      const size_t rows = a.rows - m < 3 ? a.rows - m : 3;
      kTiles[rows - 1][blocks - 1](a, m, b);
    }
  }
}

}  // namespace edgemt::kernels::f32
