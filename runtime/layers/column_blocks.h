// ColumnBlocks: how a Linear on XNNPACK splits its output columns into
// blocks, one XNNPACK operator each, so that the blocks can run as chunks
// on the edgemt ThreadPool (XNNPACK itself runs single-threaded here).
//
// Fixed at create time from the run phase's thread count: 1 thread keeps
// one operator (the batch-1 latency of one call); more threads get two
// blocks per thread, so a thread that loses its CPU holds back half of its
// share at most, each at least kMinColumnsPerBlock columns wide. Block
// edges are multiples of 16 columns (XNNPACK's widest N tile on x86 and
// Arm), so the blocks' tiles are the ones a single operator would use.
//
// And a matrix larger than kMaxBlockBytes is cut into blocks of at most
// that many bytes whatever the thread count: a single-threaded XNNPACK
// operator walks all N columns for every tile of rows, so for a matrix
// larger than the last-level cache (the 119 MiB f32 output projection of an
// OPUS-MT-base model) each tile of 7 rows re-read it from memory: 19 passes
// at batch 32 × beam 4. Block by block, the row tiles share a block's
// weights in the cache. (The extra calls cost ~1 µs each; at batch 1 that
// is ~1% of reading such a matrix once.)
#pragma once

#include <cstddef>

namespace edgemt {

constexpr size_t kMaxColumnBlocks = 64;
constexpr size_t kMinColumnsPerBlock = 64;
constexpr size_t kMaxBlockBytes = size_t{4} << 20;

struct ColumnBlocks {
  size_t count = 1;
  size_t start[kMaxColumnBlocks + 1] = {};  // block b is columns [start[b], start[b + 1])

  // packed_bytes: the whole matrix's weights as XNNPACK packs them.
  static ColumnBlocks make(size_t out_features, size_t threads, size_t packed_bytes) {
    ColumnBlocks blocks;
    size_t count = threads > 1 ? 2 * threads : 1;
    const size_t by_size = (packed_bytes + kMaxBlockBytes - 1) / kMaxBlockBytes;
    if (count < by_size) count = by_size;
    if (count > out_features / kMinColumnsPerBlock) count = out_features / kMinColumnsPerBlock;
    if (count > kMaxColumnBlocks) count = kMaxColumnBlocks;
    if (count < 1) count = 1;
    blocks.count = count;
    for (size_t b = 0; b < count; ++b) blocks.start[b] = (b * out_features / count) & ~size_t{15};
    blocks.start[count] = out_features;
    return blocks;
  }
  size_t columns(size_t b) const { return start[b + 1] - start[b]; }
};

// Estimated single-thread time of an XNNPACK f32 / f16 GEMM, for
// Parallel::worth: ~8 multiply-adds per ns (a conservative figure for
// AVX2/NEON f32 micro-kernels at small batch, where reading W dominates).
inline size_t xnnpack_gemm_nanoseconds(size_t rows, size_t in, size_t out) {
  return rows * in * out / 8;
}

}  // namespace edgemt
