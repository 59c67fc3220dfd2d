// The f32 GEMM (f32_gemm.h) with AVX2 and FMA3, for x86 CPUs without
// AVX-512: accumulators started from the bias, one fused multiply-add per
// row and depth step in k order (XNNPACK's fma3 broadcast micro-kernels'
// arithmetic). A block of 16 columns is two 8-lane registers. Tiles are one
// row × up to 4 blocks (batch 1: four weight streams in flight) or up to 3
// rows × 2 blocks (the blocks' 2 × K × 64 bytes stay in cache while the rows
// pass); at most 12 accumulators of the 16 registers.
//
// A panel of 2 blocks is read from L3 or memory by its first row tile and
// from L2 by the others. So with a few rows (the encoder at batch 1: one
// tile pass per 3 source tokens) that first pass, at ~21 bytes of weights a
// cycle, waits on L3. The first two tiles of each panel therefore prefetch
// the next panel, one 64-byte line per depth step (a block is K lines), so
// it is in cache when its own first tile starts; a panel of a single tile
// prefetches both blocks. Only up to 24 rows (kMostPrefetchingRows).
//
// With more rows (beam search: batch × beam rows) every tile of a panel
// prefetches an equal share of the next panel's lines before it runs, so
// the requests are spread over the whole panel's time instead of crowding
// its first tiles (prefetch_panel_share). A decoder step at 128 rows reads
// all its weights (~200 MB for OPUS-MT-base in f32) from memory, and
// without this each panel's first tile waited on it.
#include <immintrin.h>

#include "kernels/f32_gemm.h"
#include "kernels/stream_prefetch.h"
#include "kernels/x86/avx2_math.h"

namespace edgemt::kernels::f32 {
namespace {

// kRows × kBlocks outputs from row m0, block b0; also prefetches
// kPrefetchBlocks (0-2) blocks from `prefetch` (a block is K lines apart),
// one line of each per depth step. kStream: each of its own blocks' lines
// 4 KiB ahead as well (stream_prefetch.h).
template <size_t kRows, size_t kBlocks, size_t kPrefetchBlocks, bool kStream = false>
void tile(const GemmArgs& a, size_t m0, size_t b0, const char* prefetch) {
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
  const size_t prefetch_step = step * sizeof(float);  // bytes between blocks
  for (size_t k = 0; k < depth; ++k) {
    for (size_t j = 0; j < kPrefetchBlocks; ++j) _mm_prefetch(prefetch + j * prefetch_step + k * 64, _MM_HINT_T0);
    if constexpr (kStream) {
      for (size_t j = 0; j < kBlocks; ++j) prefetch_stream_ahead(block + j * step + k * kBlockColumns);
    }
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
        avx2::store_first(y, width, acc[r][j][0]);
        if (width > 8) avx2::store_first(y + 8, width - 8, acc[r][j][1]);
      }
    }
  }
}

// Rows up to which the first tiles prefetch the next panel inside their
// depth loop. Past ~8 tiles the first pass is a small part of a panel's
// time, and those prefetches cost more than they save
// (BM_PackedF32GemmChain at M = 128: 4-13% slower); there every tile
// prefetches a share of the next panel before it runs instead.
constexpr size_t kMostPrefetchingRows = 24;

using TileFunction = void (*)(const GemmArgs&, size_t m0, size_t b0, const char* prefetch);
// One row: four blocks' streams, each prefetched ahead of its own reads (the
// hardware prefetchers stop at each 4 KiB page).
constexpr TileFunction kRowTiles[4] = {tile<1, 1, 0, true>, tile<1, 2, 0, true>, tile<1, 3, 0, true>,
                                       tile<1, 4, 0, true>};  // [blocks - 1]
// [prefetched blocks][rows - 1][blocks - 1]: 3 rows × 2 blocks keeps 12
// accumulators in flight, enough to cover the FMA latency at two FMAs per
// cycle.
constexpr TileFunction kTiles[3][3][2] = {
    {{tile<1, 1, 0>, tile<1, 2, 0>}, {tile<2, 1, 0>, tile<2, 2, 0>}, {tile<3, 1, 0>, tile<3, 2, 0>}},
    {{tile<1, 1, 1>, tile<1, 2, 1>}, {tile<2, 1, 1>, tile<2, 2, 1>}, {tile<3, 1, 1>, tile<3, 2, 1>}},
    {{tile<1, 1, 2>, tile<1, 2, 2>}, {tile<2, 1, 2>, tile<2, 2, 2>}, {tile<3, 1, 2>, tile<3, 2, 2>}}};

// Prefetches tile t's share (of `tiles`) of the `lines` 64-byte lines at
// `panel`: lines [t·share, (t + 1)·share), share = ceil(lines / tiles).
// Measured on a Zen 3 VM (128 rows, K = 512, weights streamed from memory,
// old and new interleaved): 1.07-1.10x at N = 58,101 and 2,048 (1.02-1.07x
// with a second process doing the same on the other core); 0.98-1.02x at 32
// rows.
inline void prefetch_panel_share(const char* panel, size_t lines, size_t t, size_t tiles) {
  const size_t share = (lines + tiles - 1) / tiles;
  const size_t first = t * share;
  const size_t last = first + share < lines ? first + share : lines;
  for (size_t line = first; line < last; ++line) _mm_prefetch(panel + line * 64, _MM_HINT_T0);
}

}  // namespace

void gemm_avx2(const GemmArgs& a, size_t first_block, size_t block_count) {
  const size_t end = first_block + block_count;
  if (a.rows == 1) {
    // Four weight streams at once, each prefetched ahead (kRowTiles).
    for (size_t b = first_block; b < end; b += 4) kRowTiles[(end - b < 4 ? end - b : 4) - 1](a, 0, b, nullptr);
    return;
  }
  const size_t block_floats = a.weights->depth * kBlockColumns;
  const bool one_tile = a.rows <= 3;
  const bool prefetch = a.rows <= kMostPrefetchingRows;
  const size_t tile_count = (a.rows + 2) / 3;
  for (size_t b = first_block; b < end; b += 2) {
    const size_t blocks = end - b < 2 ? end - b : 2;
    // The next panel of this call (none after the last).
    const size_t next_blocks = end - (b + blocks) < 2 ? end - (b + blocks) : 2;
    const char* next = reinterpret_cast<const char*>(a.weights->blocks + (b + blocks) * block_floats);
    const size_t next_lines = next_blocks * block_floats * sizeof(float) / 64;
    for (size_t m = 0, t = 0; m < a.rows; m += 3, ++t) {
      const size_t rows = a.rows - m < 3 ? a.rows - m : 3;
      if (!prefetch) prefetch_panel_share(next, next_lines, t, tile_count);
      // Tile t < 2 prefetches block t of the next panel; a lone tile both.
      const size_t prefetched = !prefetch ? 0 : one_tile ? next_blocks : (t < next_blocks ? 1 : 0);
      const char* from = prefetched == 0 ? nullptr : next + (one_tile ? 0 : t * block_floats * sizeof(float));
      kTiles[prefetched][rows - 1][blocks - 1](a, m, b, from);
    }
  }
}

}  // namespace edgemt::kernels::f32
