// The f32 GEMM (f32_gemm.h) with AVX-512: tiles of up to 6 rows × 4 blocks
// of 16 columns (5-42 rows: tall tiles of up to 14 rows × 2 blocks, below),
// accumulators started from the bias,
// one fused multiply-add per row and depth step in k order (XNNPACK's
// broadcast micro-kernels' arithmetic). The tile's blocks of weights
// (K × 64 bytes each) stay in cache while the row tiles pass over them.
//
// A group's first row tile reads its 4 blocks from L3 or memory, the others
// from L2. So every row tile after the first prefetches an equal share of
// the next group's lines into L2, a few lines per depth step, and the next
// group's first tile finds them there (as the AVX2 kernel does). Intel Xeon
// (cpu family 6 model 207), alternate runs: an OPUS-MT-base-shaped fp32
// encoder at batch 1 (~14 rows) +7% (5 of 6 runs faster), tiny11-shaped
// greedy at batch 1 +3%; BM_PackedF32BeamStepChain (128 rows, OPUS-MT-base's
// 203 MB of weights from memory) 88-95 -> 87-134 GFLOP/s on 1 thread, its
// translation at batch 32 × beam 4 within the VM's noise (~+3%). One row tile
// (up to 4 rows, a decoder step at batch 1) streams its blocks as a tall
// tile does (below): the hardware prefetchers stop at each 4 KiB page of
// its 4 streams. Intel Xeon (cpu family 6 model 167), OPUS-MT-base-shaped
// fp32 greedy at batch 1 with a shortlist (the decoder's 88 MB of weights
// per token, more than this VM's share of L3), 4 alternate runs: 3.97-4.11
// -> 3.79-3.84 ms per token; the tiny11 student (weights in L3) the same.
#include "kernels/f32_gemm.h"

#include "kernels/output_prefetch.h"
#include "kernels/stream_prefetch.h"
#include "kernels/x86/avx512_math.h"
#include "kernels/x86/f32_tiles_avx512.h"

namespace edgemt::kernels::f32 {
namespace {

// Lines a tile asks the outer caches for while it computes: the next
// group of blocks, so that it arrives from memory while the rows of this
// group run from cache (gemm_avx512).
struct Prefetch {
  const char* first = nullptr;
  size_t lines_per_step = 0;  // per depth step
  size_t steps = 0;           // depth steps that prefetch
};

// kRows rows × kBlocks blocks of 16 columns: kRows·kBlocks independent
// accumulators (at most 28 of the 32 registers), each a chain of K fused
// multiply-adds in k order. kStream: a tile that streams its own blocks (a
// tall tile, below, or the only row tile of 1-4 rows).
template <size_t kRows, size_t kBlocks, bool kStream = false>
void tile(const GemmArgs& a, size_t m0, size_t b0, const Prefetch& ahead) {
  const PackedWeights& w = *a.weights;
  const size_t depth = w.depth;
  const size_t step = depth * kBlockColumns;  // floats between blocks
  const float* block = w.blocks + b0 * step;
  __m512 acc[kRows][kBlocks];
  start_from_bias(w, b0, acc);
  const float* x = a.x + m0 * a.x_stride;
  for (size_t k = 0; k < depth; ++k) {
    if (k < ahead.steps) {
      for (size_t i = 0; i < ahead.lines_per_step; ++i) {
        __builtin_prefetch(ahead.first + (k * ahead.lines_per_step + i) * 64, 0, 2);
      }
    }
    if constexpr (kStream) {
      for (size_t j = 0; j < kBlocks; ++j) prefetch_stream_ahead(block + j * step + k * kBlockColumns);
    }
    __m512 wk[kBlocks];
    for (size_t j = 0; j < kBlocks; ++j) wk[j] = _mm512_load_ps(block + j * step + k * kBlockColumns);
    for (size_t r = 0; r < kRows; ++r) {
      const __m512 xr = _mm512_set1_ps(x[r * a.x_stride + k]);
      for (size_t j = 0; j < kBlocks; ++j) acc[r][j] = _mm512_fmadd_ps(xr, wk[j], acc[r][j]);
    }
  }
  store_clamped(a, m0, b0, acc);
}

// Row tile t's share (t >= 1, of `helpers` tiles) of the `lines` 64-byte
// lines at `next`, a few per depth step over a depth of `depth`.
Prefetch share_of_next(const char* next, size_t lines, size_t t, size_t helpers, size_t depth) {
  Prefetch ahead;
  const size_t per_tile = (lines + helpers - 1) / helpers;
  const size_t first = (t - 1) * per_tile;
  if (depth == 0 || per_tile == 0 || first >= lines) return ahead;
  const size_t count = lines - first < per_tile ? lines - first : per_tile;
  ahead.first = next + first * 64;
  ahead.lines_per_step = (per_tile + depth - 1) / depth;
  ahead.steps = (count + ahead.lines_per_step - 1) / ahead.lines_per_step;
  return ahead;
}

using TileFunction = void (*)(const GemmArgs&, size_t, size_t, const Prefetch&);
// Rows per tile: 6 rows × 4 blocks, 24 chains, take four weight loads and six
// broadcasts per 24 fused multiply-adds, where 4 × 4 took four and four per
// 16: the weights, 64 KiB per 4 blocks at depth 256 (more than L1), come
// from L2 a third less often. Intel Xeon (cpu family 6 model 167),
// BM_PackedF32Gemm at M 128-320, K 256-1024, 3 alternate runs: 150-162 ->
// 163-185 GFLOP/s; the trained tiny11 student's fp32 translation at batch
// 32, 1,000 lines, 6 alternate runs: 1.97 -> 1.86 s.
constexpr size_t kRowTile = 6;
constexpr TileFunction kTiles[kRowTile][4] = {  // [rows - 1][blocks - 1]
    {tile<1, 1>, tile<1, 2>, tile<1, 3>, tile<1, 4>}, {tile<2, 1>, tile<2, 2>, tile<2, 3>, tile<2, 4>},
    {tile<3, 1>, tile<3, 2>, tile<3, 3>, tile<3, 4>}, {tile<4, 1>, tile<4, 2>, tile<4, 3>, tile<4, 4>},
    {tile<5, 1>, tile<5, 2>, tile<5, 3>, tile<5, 4>}, {tile<6, 1>, tile<6, 2>, tile<6, 3>, tile<6, 4>}};
// 1-4 rows: one row tile, which streams its blocks (above).
constexpr TileFunction kStreamTiles[4][4] = {  // [rows - 1][blocks - 1]
    {tile<1, 1, true>, tile<1, 2, true>, tile<1, 3, true>, tile<1, 4, true>},
    {tile<2, 1, true>, tile<2, 2, true>, tile<2, 3, true>, tile<2, 4, true>},
    {tile<3, 1, true>, tile<3, 2, true>, tile<3, 3, true>, tile<3, 4, true>},
    {tile<4, 1, true>, tile<4, 2, true>, tile<4, 3, true>, tile<4, 4, true>}};

// A few rows (an encoder at batch 1: one per source token) go in one row
// tile of every row × 2 blocks: each weight is read once from L3 or memory
// and used by every row at once, where row tiles read each group of
// blocks from L3 once and then wait on L2 for the other row tiles (up to 14
// rows × 2 blocks: 28 accumulators of the 32 registers). The tile
// prefetches each block's line 4 KiB ahead (stream_prefetch.h): the
// hardware prefetchers stop at page boundaries. Intel Xeon (cpu family 6
// model 207), alternate runs: BM_PackedF32GemmChain (19 MB of weights) at 6
// and 13 rows 1.23-1.32 -> 0.82-0.90 ms and 1.71-1.81 -> 1.03-1.42 ms from
// L3, 1.71-2.03 -> 1.33-1.78 ms and 1.81-2.46 -> 1.60-1.73 ms from memory;
// a tiny11-shaped model's encoder and first step over one 14-token sentence,
// medians of 8: 3.90 -> 2.86 ms.
//
// 15-42 rows (a decoder step at batch 32) go in 2 or 3 tall tiles of
// nearly equal rows, one after the other on each pair of blocks: the first
// streams the pair's weights in, the others find them in L1 (32 KiB at
// depth 256). Row tiles there left a short last tile and waited on L3 at
// each group's first. Intel Xeon (cpu family 6 model 167),
// BM_PackedF32GemmChain, µs per row, row tiles -> tall tiles, weights from
// L3 / from memory: 15 rows 90 -> 80 / 108 -> 97, 20 rows 82 -> 69 / 105
// -> 88, 32 rows 73 -> 67 / 83 -> 79, 40 rows 69 -> 64 / 77 -> 77; at 48
// and more rows from memory 2-8% slower, so row tiles from 43. The
// trained tiny11 student's fp32 translation at batch 32, 1,000 lines, 8
// alternate runs: 2.18 -> 2.14 s.
constexpr size_t kTallRows = 14;
constexpr size_t kTallChunkRows = 42;  // 3 tall tiles; each has at least 7 rows
constexpr TileFunction kTallTiles[kTallRows - 4][2] = {  // [rows - 5][blocks - 1]
    {tile<5, 1, true>, tile<5, 2, true>},
    {tile<6, 1, true>, tile<6, 2, true>},
    {tile<7, 1, true>, tile<7, 2, true>},
    {tile<8, 1, true>, tile<8, 2, true>},
    {tile<9, 1, true>, tile<9, 2, true>},
    {tile<10, 1, true>, tile<10, 2, true>},
    {tile<11, 1, true>, tile<11, 2, true>},
    {tile<12, 1, true>, tile<12, 2, true>},
    {tile<13, 1, true>, tile<13, 2, true>},
    {tile<14, 1, true>, tile<14, 2, true>}};

}  // namespace

void gemm_avx512(const GemmArgs& a, size_t first_block, size_t block_count) {
  const size_t end = first_block + block_count;
  if (a.rows > 4 && a.rows <= kTallChunkRows) {
    // The fewest tall tiles, rows spread evenly (15: 8 + 7; 29: 10 + 10 + 9).
    const size_t chunks = (a.rows + kTallRows - 1) / kTallRows;
    const size_t per_chunk = (a.rows + chunks - 1) / chunks;
    for (size_t b = first_block; b < end; b += 2) {
      for (size_t m = 0; m < a.rows; m += per_chunk) {
        const size_t rows = a.rows - m < per_chunk ? a.rows - m : per_chunk;
        kTallTiles[rows - 5][end - b < 2 ? 0 : 1](a, m, b, Prefetch());
      }
    }
    return;
  }
  // Four blocks at a time (their weights, 4 × K × 64 bytes, stay in cache
  // while every row passes), six rows at a time inside (kRowTile).
  // (4 rows measured against 8 rows × 2 blocks: as fast at 128 rows, faster
  // at 1-4.)
  // Each group of rows prefetches the output it writes in the next pass
  // (output_prefetch.h), and the weights of the next group (above).
  const size_t columns = a.weights->columns;
  const bool prefetch = a.rows >= kPrefetchOutputRows;
  const size_t depth = a.weights->depth;
  const size_t block_floats = depth * kBlockColumns;
  const size_t row_tiles = (a.rows + kRowTile - 1) / kRowTile;
  for (size_t b = first_block; b < end; b += 4) {
    const size_t blocks = end - b < 4 ? end - b : 4;
    const size_t next_end = end - (b + blocks) < 4 ? end : b + blocks + 4;
    // The next group's weights (none after this call's last group), for
    // this group's row tiles after the first.
    const char* next = reinterpret_cast<const char*>(a.weights->blocks + (b + blocks) * block_floats);
    const size_t next_lines = (next_end - (b + blocks)) * block_floats * sizeof(float) / 64;
    for (size_t m = 0, t = 0; m < a.rows; m += kRowTile, ++t) {
      const size_t rows = a.rows - m < kRowTile ? a.rows - m : kRowTile;
      if (prefetch) {
        prefetch_output(a.y, a.y_stride, m, rows, (b + blocks) * kBlockColumns,
                        next_end * kBlockColumns < columns ? next_end * kBlockColumns : columns);
      }
      const Prefetch ahead = t == 0 ? Prefetch() : share_of_next(next, next_lines, t, row_tiles - 1, depth);
      (a.rows <= 4 ? kStreamTiles : kTiles)[rows - 1][blocks - 1](a, m, b, ahead);
    }
  }
}

}  // namespace edgemt::kernels::f32
