// The loop of the zero-skipping f32 kernels (f32_gemm_sparse.h) on x86:
// each row's nonzero inputs listed once (x86/nonzero_list.h) for all of its
// column groups, rather than once per group. Listing costs about a third of
// a group's time at a ReLU's 10% nonzero, and a 256-wide output has 4
// groups of 64 columns (AVX2; BM_SparseF32Gemm M 512 K 1536 N 256, 10%:
// 1.38 -> 1.25 ms, 1%: 0.68 -> 0.36 ms).
// Rows go a chunk at a time, their lists side by side in one buffer, and
// each group runs over the chunk's rows before the next: a group's
// weights stay in cache over the chunk, as they did over all rows. Depths
// past the buffer go in slices, the partial sums kept in y (floats stored
// and loaded back unchanged), so that every term still adds in k order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/x86/nonzero_list.h"

namespace edgemt::kernels::x86 {

// Listed positions per chunk: 16 KiB of stack (as much as any kernel here
// takes, so that threads with small stacks run them).
constexpr size_t kListedPerChunk = 4096;
constexpr size_t kRowsPerChunk = 64;

// Where a row group's sums start and what it does with them at its end.
struct SliceEnds {
  bool first;  // start from the bias (else from the partial sums in y)
  bool last;   // clamp and store y (else store the partial sums in y)
};

// Blocks [first_block, first_block + block_count) of every row, kGroupBlocks
// at a time: nonzero(m, p0, end) gives the mask of kLanes positions from p0
// of row m that hold a term (none at or past end), and
// row_group(m, b0, blocks, list, count, ends) adds the listed terms of row
// m to blocks [b0, b0 + blocks).
template <size_t kLanes, size_t kGroupBlocks, typename Args, typename Nonzero, typename RowGroup>
inline void run_listed_rows(const Args& args, size_t first_block, size_t block_count, size_t depth,
                            Nonzero nonzero, RowGroup row_group) {
  alignas(64) uint32_t lists[kListedPerChunk + kLanes];
  size_t starts[kRowsPerChunk + 1];
  const size_t end_block = first_block + block_count;
  for (size_t slice = 0; slice < depth; slice += kListedPerChunk) {
    const size_t slice_end = depth - slice < kListedPerChunk ? depth : slice + kListedPerChunk;
    const SliceEnds ends{slice == 0, slice_end == depth};
    for (size_t m0 = 0; m0 < args.rows;) {
      // Rows while the next one's list, however long, still fits.
      size_t rows = 0, used = 0;
      while (m0 + rows < args.rows && rows < kRowsPerChunk &&
             used + (slice_end - slice) <= kListedPerChunk) {
        starts[rows] = used;
        for (size_t p0 = slice; p0 < slice_end; p0 += kLanes) {
          const auto mask = nonzero(m0 + rows, p0, slice_end);
          if constexpr (kLanes == 16) {
            used = append_nonzero_lanes16(mask, p0, lists, used);
          } else {
            used = append_nonzero_lanes8(mask, p0, lists, used);
          }
        }
        ++rows;
      }
      starts[rows] = used;
      for (size_t b = first_block; b < end_block; b += kGroupBlocks) {
        const size_t blocks = end_block - b < kGroupBlocks ? end_block - b : kGroupBlocks;
        for (size_t r = 0; r < rows; ++r) {
          row_group(m0 + r, b, blocks, lists + starts[r], starts[r + 1] - starts[r], ends);
        }
      }
      m0 += rows;
    }
  }
}

}  // namespace edgemt::kernels::x86
