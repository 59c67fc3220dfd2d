// The f32 GEMM (f32_gemm.h) with AVX2 and FMA3, for x86 CPUs without
// AVX-512: accumulators started from the bias, one fused multiply-add per
// row and depth step in k order (XNNPACK's fma3 broadcast micro-kernels'
// arithmetic). A block of 16 columns is two 8-lane registers. Tiles are one
// row × up to 4 blocks (batch 1: four weight streams in flight) or up to 3
// rows × 2 blocks (the blocks' 2 × K × 64 bytes stay in cache while the rows
// pass); at most 12 accumulators of the 16 registers.
#include <immintrin.h>

#include "kernels/f32_gemm.h"
#include "kernels/x86/avx2_math.h"

namespace edgemt::kernels::f32 {
namespace {

template <size_t kRows, size_t kBlocks>
void tile(const GemmArgs& a, size_t m0, size_t b0) {
  const PackedWeights& w = *a.weights;
  const size_t depth = w.depth;
  const size_t step = depth * kBlockColumns;  // floats between blocks
  const float* block = w.blocks + b0 * step;
  __m256 acc[kRows][kBlocks][2];
  for (size_t j = 0; j < kBlocks; ++j) {
    const float* bias = w.bias + (b0 + j) * kBlockColumns;
    const __m256 lo = _mm256_load_ps(bias), hi = _mm256_load_ps(bias + 8);
    for (size_t r = 0; r < kRows; ++r) {
      acc[r][j][0] = lo;
      acc[r][j][1] = hi;
    }
  }
  const float* x = a.x + m0 * a.x_stride;
  for (size_t k = 0; k < depth; ++k) {
    __m256 xr[kRows];
    for (size_t r = 0; r < kRows; ++r) xr[r] = _mm256_set1_ps(x[r * a.x_stride + k]);
    for (size_t j = 0; j < kBlocks; ++j) {
      const float* wk = block + j * step + k * kBlockColumns;
      const __m256 lo = _mm256_load_ps(wk), hi = _mm256_load_ps(wk + 8);
      for (size_t r = 0; r < kRows; ++r) {
        acc[r][j][0] = _mm256_fmadd_ps(xr[r], lo, acc[r][j][0]);
        acc[r][j][1] = _mm256_fmadd_ps(xr[r], hi, acc[r][j][1]);
      }
    }
  }
  // XNNPACK's clamp: max_ps(acc, low) is acc > low ? acc : low.
  const __m256 low = _mm256_set1_ps(a.relu ? 0.0f : -__builtin_huge_valf());
  for (size_t j = 0; j < kBlocks; ++j) {
    for (size_t r = 0; r < kRows; ++r) {
      acc[r][j][0] = _mm256_max_ps(acc[r][j][0], low);
      acc[r][j][1] = _mm256_max_ps(acc[r][j][1], low);
    }
  }
  for (size_t j = 0; j < kBlocks; ++j) {
    const size_t n0 = (b0 + j) * kBlockColumns;
    const size_t width = w.columns - n0;
    for (size_t r = 0; r < kRows; ++r) {
      float* y = a.y + (m0 + r) * a.y_stride + n0;
      if (width >= kBlockColumns) {
        _mm256_storeu_ps(y, acc[r][j][0]);
        _mm256_storeu_ps(y + 8, acc[r][j][1]);
      } else {
        _mm256_maskstore_ps(y, avx2::tail_mask(width), acc[r][j][0]);
        if (width > 8) _mm256_maskstore_ps(y + 8, avx2::tail_mask(width - 8), acc[r][j][1]);
      }
    }
  }
}

using TileFunction = void (*)(const GemmArgs&, size_t, size_t);
constexpr TileFunction kRowTiles[4] = {tile<1, 1>, tile<1, 2>, tile<1, 3>, tile<1, 4>};  // [blocks - 1]
// [rows - 1][blocks - 1]: 3 rows × 2 blocks keeps 12 accumulators in
// flight, enough to cover the FMA latency at two FMAs per cycle.
constexpr TileFunction kTiles[3][2] = {{tile<1, 1>, tile<1, 2>}, {tile<2, 1>, tile<2, 2>}, {tile<3, 1>, tile<3, 2>}};

}  // namespace

void gemm_avx2(const GemmArgs& a, size_t first_block, size_t block_count) {
  const size_t end = first_block + block_count;
  if (a.rows == 1) {
    for (size_t b = first_block; b < end; b += 4) kRowTiles[(end - b < 4 ? end - b : 4) - 1](a, 0, b);
    return;
  }
  for (size_t b = first_block; b < end; b += 2) {
    const size_t blocks = end - b < 2 ? end - b : 2;
    for (size_t m = 0; m < a.rows; m += 3) kTiles[(a.rows - m < 3 ? a.rows - m : 3) - 1][blocks - 1](a, m, b);
  }
}

}  // namespace edgemt::kernels::f32
