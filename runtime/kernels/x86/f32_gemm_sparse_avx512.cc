// The zero-skipping f32 GEMM (f32_gemm_sparse.h) with AVX-512, two ways
// (x86/listed_rows.h):
// - one row at a time over a group of up to 8 blocks (8 accumulators of 16
//   columns): the row's nonzero inputs are listed 16 at a time (a compare
//   into a mask and a compress), once for all its groups, and each adds its
//   term to every block's accumulator;
// - shared tiles: 6 rows over 4 blocks (the dense kernel's 24 accumulators)
//   over one list of the inputs nonzero in any of the 6, where rows share
//   most of their nonzeros.
// Both add each term in k order from the bias: the dense kernel's fused
// multiply-adds without (most of) the ones whose x is zero.
#include <cstdint>

#include "kernels/f32_gemm_sparse.h"
#include "kernels/x86/avx512_math.h"
#include "kernels/x86/f32_tiles_avx512.h"
#include "kernels/x86/listed_rows.h"

namespace edgemt::kernels::f32 {
namespace {

constexpr size_t kGroupBlocks = 8;  // 128 columns; 8 x K x 64 bytes of weights

// Row m's listed terms on blocks [b0, b0 + kBlocks), from the bias (or the
// partial sums a previous slice left in y) into 8 accumulators, in k order.
template <size_t kBlocks>
void row_group(const GemmArgs& a, size_t m, size_t b0, const uint32_t* list, size_t count,
               x86::SliceEnds ends) {
  const PackedWeights& w = *a.weights;
  const size_t step = w.depth * kBlockColumns;  // floats between blocks
  const float* block = w.blocks + b0 * step;
  float* y = a.y + m * a.y_stride + b0 * kBlockColumns;
  __m512 acc[kBlocks];
  for (size_t j = 0; j < kBlocks; ++j) {
    acc[j] = ends.first ? _mm512_load_ps(w.bias + (b0 + j) * kBlockColumns)
                        : _mm512_maskz_loadu_ps(avx512::tail_mask(w.columns - (b0 + j) * kBlockColumns),
                                                y + j * kBlockColumns);
  }
  const float* x = a.x + m * a.x_stride;
  for (size_t i = 0; i < count; ++i) {
    const size_t k = list[i];
    const __m512 xk = _mm512_set1_ps(x[k]);
    const float* wk = block + k * kBlockColumns;
    for (size_t j = 0; j < kBlocks; ++j) acc[j] = _mm512_fmadd_ps(xk, _mm512_load_ps(wk + j * step), acc[j]);
  }
  // XNNPACK's clamp, as the dense kernel: max_ps(acc, low) is acc > low ? acc : low.
  const __m512 low = _mm512_set1_ps(a.relu ? 0.0f : -__builtin_huge_valf());
  for (size_t j = 0; j < kBlocks; ++j) {
    _mm512_mask_storeu_ps(y + j * kBlockColumns, avx512::tail_mask(w.columns - (b0 + j) * kBlockColumns),
                          ends.last ? _mm512_max_ps(acc[j], low) : acc[j]);
  }
}

using RowGroup = void (*)(const GemmArgs&, size_t, size_t, const uint32_t*, size_t, x86::SliceEnds);
constexpr RowGroup kRowGroups[kGroupBlocks] = {row_group<1>, row_group<2>, row_group<3>,
                                               row_group<4>, row_group<5>, row_group<6>,
                                               row_group<7>, row_group<8>};

constexpr size_t kTileRows = 6;    // the dense kernel's row tile: 6 x 4 accumulators
constexpr size_t kTileBlocks = 4;  // 64 columns
// Listed weight rows fetched ahead: a list's depths skip, so the hardware's
// prefetchers miss them (BM_SparseF32Gemm, rows sharing their nonzeros:
// 8 ahead 7-15% faster than none, 2-16 within 5% of each other).
constexpr size_t kPrefetchAhead = 8;

// Rows [m0, m0 + kRows) on blocks [b0, b0 + kBlocks) over one list of
// inputs, each nonzero in some row of the tile: each listed k adds x[m, k] ·
// w[n, k] to every row's accumulators, in k order from the bias (a zero
// x adds fma(±0, w, acc), as the dense kernel does), then the clamp.
template <size_t kRows, size_t kBlocks>
void shared_tile(const GemmArgs& a, size_t m0, size_t b0, const uint32_t* list, size_t count) {
  const PackedWeights& w = *a.weights;
  const size_t step = w.depth * kBlockColumns;  // floats between blocks
  const float* block = w.blocks + b0 * step;
  __m512 acc[kRows][kBlocks];
  start_from_bias(w, b0, acc);
  const float* x = a.x + m0 * a.x_stride;
  for (size_t i = 0; i < count; ++i) {
    const size_t k = list[i];
    const float* wk = block + k * kBlockColumns;
    if (i + kPrefetchAhead < count) {
      const float* ahead = block + list[i + kPrefetchAhead] * kBlockColumns;
      for (size_t j = 0; j < kBlocks; ++j) {
        _mm_prefetch(reinterpret_cast<const char*>(ahead + j * step), _MM_HINT_T0);
      }
    }
    __m512 wv[kBlocks];
    for (size_t j = 0; j < kBlocks; ++j) wv[j] = _mm512_load_ps(wk + j * step);
    for (size_t r = 0; r < kRows; ++r) {
      const __m512 xk = _mm512_set1_ps(x[r * a.x_stride + k]);
      for (size_t j = 0; j < kBlocks; ++j) acc[r][j] = _mm512_fmadd_ps(xk, wv[j], acc[r][j]);
    }
  }
  store_clamped(a, m0, b0, acc);
}

using SharedTile = void (*)(const GemmArgs&, size_t, size_t, const uint32_t*, size_t);
template <size_t kRows>
constexpr SharedTile kSharedTilesOf[kTileBlocks] = {shared_tile<kRows, 1>, shared_tile<kRows, 2>,
                                                     shared_tile<kRows, 3>, shared_tile<kRows, 4>};
constexpr const SharedTile* kSharedTiles[kTileRows - 1] = {kSharedTilesOf<2>, kSharedTilesOf<3>,
                                                           kSharedTilesOf<4>, kSharedTilesOf<5>,
                                                           kSharedTilesOf<6>};

}  // namespace

void sparse_gemm_avx512(const GemmArgs& a, size_t first_block, size_t block_count) {
  const size_t depth = a.weights->depth;
  // Row m's nonzero inputs among 16 from k0 (none at or past end);
  // unordered-or-not-equal: NaN counts as nonzero, as in the dense sum.
  auto nonzero = [&a](size_t m, size_t k0, size_t end) {
    const __mmask16 valid = avx512::tail_mask(end - k0);
    const __m512 v = _mm512_maskz_loadu_ps(valid, a.x + m * a.x_stride + k0);
    return _mm512_mask_cmp_ps_mask(valid, v, _mm512_setzero_ps(), _CMP_NEQ_UQ);
  };
  auto group = [&a](size_t m, size_t b0, size_t blocks, const uint32_t* list, size_t count,
                    x86::SliceEnds ends) { kRowGroups[blocks - 1](a, m, b0, list, count, ends); };
  if (a.rows < 2 || depth > x86::kListedPerChunk) {
    x86::run_listed_rows<16, kGroupBlocks>(a, first_block, block_count, depth, nonzero, group);
    return;
  }
  // A group's 4-block tiles.
  auto shared = [&a](size_t m0, size_t rows, size_t b0, size_t blocks, const uint32_t* list,
                     size_t count) {
    for (size_t t = b0; t < b0 + blocks; t += kTileBlocks) {
      const size_t tile_blocks = b0 + blocks - t < kTileBlocks ? b0 + blocks - t : kTileBlocks;
      kSharedTiles[rows - 2][tile_blocks - 1](a, m0, t, list, count);
    }
  };
  // Shared tiles up to 200% of the rows' own terms (x86/listed_rows.h).
  x86::run_shared_tiles<16, kGroupBlocks, kTileRows, 200>(a, first_block, block_count, depth, nonzero,
                                                           group, shared);
}

}  // namespace edgemt::kernels::f32
