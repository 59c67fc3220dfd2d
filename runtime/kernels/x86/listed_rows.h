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
// run_shared_tiles, for 2 rows or more and depths that fit the buffer, also
// runs rows that share most of their nonzeros as one tile over their union.
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

// append_nonzero_lanes16 or 8 (x86/nonzero_list.h).
template <size_t kLanes, typename Mask>
inline size_t append_lanes(Mask nonzero, size_t first, uint32_t* list, size_t count) {
  if constexpr (kLanes == 16) {
    return append_nonzero_lanes16(nonzero, first, list, count);
  } else {
    return append_nonzero_lanes8(nonzero, first, list, count);
  }
}

// Blocks [first_block, first_block + block_count) of every row, kGroupBlocks
// at a time: nonzero(m, p0, end) gives the mask of kLanes positions from p0
// of row m that hold a term (none at or past end), and
// row_group(m, b0, blocks, list, count, ends) adds the listed terms of row
// m to blocks [b0, b0 + blocks).
template <size_t kLanes, size_t kGroupBlocks, typename Args, typename Nonzero, typename RowGroup>
__attribute__((noinline)) void run_listed_rows(const Args& args, size_t first_block, size_t block_count,
                                               size_t depth, Nonzero nonzero, RowGroup row_group) {
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
          used = append_lanes<kLanes>(nonzero(m0 + rows, p0, slice_end), p0, lists, used);
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

// Shared tiles (f32_gemm_sparse_avx512.cc, _avx2.cc): rows kTileRows at a
// time, one tile over the union of their nonzero inputs where its
// multiply-adds (rows x union) are at most kSharedCostPercent of the rows'
// own terms: the tile does each listed input's terms for all its rows from
// registers, nearer the dense kernel's rate than a row's own list, which
// reads its weights from L2 once per term. A trained student's tokens of one
// sentence have their nonzeros at nearly the same depths (the trained
// tiny11's encoder: the union of 6 rows 14% of the depth, each row 13%).
// Where tiles stop paying differs by kernel: at 270% (rows in pairs that
// share their nonzeros; BM_SparseF32Gemm shared 2), AVX-512's tiles were 8%
// slower than own lists and AVX2's (6 rows x 1 block, which gain less) 45%
// slower; the kernels pass 200% and 150%.
//
// An encoder batch holds its sentences' rows one after another, so a tile
// of 6 often reaches into the next sentence, whose nonzeros are others: its
// union then does not pay though its first rows would. So a tile that does
// not pay becomes its longest first part that does, if that has at least
// kLeastPartRows rows, and the next tile starts at the next sentence.
// Otherwise the rows of that part (or the first row, where not even 2
// share) go on their own lists and the next tile is tried from the row
// after them; a second such try in a row counts as a miss (below). Parts
// of 2 or 3 rows would cost a try (a 6-row listing) per 2 or 3 rows where
// rows share in pairs (BM_SparseF32Gemm shared 2 at 5%: ~35% slower), and
// AVX2's tiles of 2 rows on 1 block keep only 4 chains of multiply-adds.
// Zen 3, AVX2: the trained tiny11's encoder at batch 32 runs 84% of its
// rows in shared tiles instead of 43% (the encoder 5-7% faster
// end to end); BM_SparseF32Gemm M 512 shared 16 at 10% and 20% nonzero
// 1.22 -> 0.94 and 2.66 -> 1.37 ms, the other cases as before. Zen 4,
// AVX-512 (200%, where a tile 2 rows into the next sentence already
// paid): shared 16 as before; shared 2, whose 4-row parts (two pairs) now
// pay, 1.06 -> 0.88 and 1.97 -> 1.49 ms; the encoder as before (within 1%).
constexpr size_t kLeastPartRows = 4;

// Tiles listed row by row after a miss, before the next try: 3 after one
// miss, doubling (plus one) with each miss in a row up to 31, so that rows
// that share no inputs cost a union about every 32nd tile (each costs about
// a 6-row listing: the union listed every fourth tile made BM_SparseF32Gemm's
// independent rows 4-10% slower at 1% nonzero).
constexpr size_t kTilesAfterMiss = 3, kMostTilesAfterMiss = 31;
constexpr size_t kEntriesPerChunk = 64;

// A chunk's entry: a shared tile (rows 2 to kTileRows) or one row (rows 1),
// and its list.
struct ListedRows {
  size_t first_row, rows, start, count;
};

// Lists the nonzero inputs of row m (or, with rows > 1, of any of rows
// [m, m + rows)) at `list`; returns how many.
template <size_t kLanes, typename Nonzero>
inline size_t list_union(Nonzero& nonzero, size_t m, size_t rows, size_t depth, uint32_t* list) {
  size_t count = 0;
  for (size_t p0 = 0; p0 < depth; p0 += kLanes) {
    decltype(nonzero(m, p0, depth)) any = 0;
    for (size_t r = 0; r < rows; ++r) any = static_cast<decltype(any)>(any | nonzero(m + r, p0, depth));
    count = append_lanes<kLanes>(any, p0, list, count);
  }
  return count;
}

// Depths up to kListedPerChunk, every row: rows a chunk at a time (as
// run_listed_rows), tiles of up to kTileRows on one shared list where that
// pays, the other rows on their own lists; each group of kGroupBlocks then
// runs over the chunk, so that its weights stay in L2 over it.
// shared_tile(m0, rows, b0, blocks, list, count) adds the listed terms of
// rows [m0, m0 + rows) to blocks [b0, b0 + blocks) (blocks up to
// kGroupBlocks), from the bias, and clamps; row_group as run_listed_rows'.
// Neither is inlined: their lists are never on the stack at once.
template <size_t kLanes, size_t kGroupBlocks, size_t kTileRows, size_t kSharedCostPercent, typename Args,
          typename Nonzero, typename RowGroup, typename SharedTile>
__attribute__((noinline)) void run_shared_tiles(const Args& args, size_t first_block, size_t block_count,
                                                size_t depth, Nonzero nonzero, RowGroup row_group,
                                                SharedTile shared_tile) {
  alignas(64) uint32_t lists[kListedPerChunk + kLanes];
  ListedRows entries[kEntriesPerChunk];
  const size_t end_block = first_block + block_count;
  size_t tiles_to_skip = 0, skip_after_miss = kTilesAfterMiss;
  bool retried = false;  // the last try listed its first rows alone; this one starts after them
  for (size_t m = 0; m < args.rows;) {
    size_t used = 0, listed = 0;
    // Rows [m, end) each on its own list, while the chunk has room for one.
    auto list_alone = [&](size_t end) {
      for (; m < end && used + depth <= kListedPerChunk; ++m) {
        const size_t count = list_union<kLanes>(nonzero, m, 1, depth, lists + used);
        entries[listed++] = {m, 1, used, count};
        used += count;
      }
    };
    while (m < args.rows && listed + kTileRows <= kEntriesPerChunk && used + depth <= kListedPerChunk) {
      const size_t rows = args.rows - m < kTileRows ? args.rows - m : kTileRows;
      const bool try_shared = rows >= 2 && tiles_to_skip == 0;
      if (tiles_to_skip > 0) --tiles_to_skip;
      if (try_shared) {
        // The union's list, and for each first part of r rows its union's
        // size and the rows' own nonzeros (united[r], own[r]).
        size_t count = 0, united[kTileRows + 1] = {}, own[kTileRows + 1] = {};
        for (size_t p0 = 0; p0 < depth; p0 += kLanes) {
          decltype(nonzero(m, p0, depth)) any = 0;
          for (size_t r = 0; r < rows; ++r) {
            const auto lanes = nonzero(m + r, p0, depth);
            any = static_cast<decltype(any)>(any | lanes);
            own[r + 1] += static_cast<size_t>(__builtin_popcount(lanes));
            united[r + 1] += static_cast<size_t>(__builtin_popcount(any));
          }
          count = append_lanes<kLanes>(any, p0, lists + used, count);
        }
        for (size_t r = 2; r <= rows; ++r) own[r] += own[r - 1];
        size_t tile = rows;
        while (tile >= 2 && 100 * tile * united[tile] > kSharedCostPercent * own[tile]) --tile;
        if (tile == rows || tile >= kLeastPartRows) {
          if (tile < rows) count = list_union<kLanes>(nonzero, m, tile, depth, lists + used);
          entries[listed++] = {m, tile, used, count};
          used += count;
          m += tile;
          skip_after_miss = kTilesAfterMiss;
          retried = false;
          continue;
        }
        if (!retried) {
          // The rows before the next sentence (or the first one) on their
          // own lists, then a try from the row after them.
          list_alone(m + (tile > 1 ? tile : 1));
          retried = true;
          continue;
        }
        retried = false;
        tiles_to_skip = skip_after_miss;
        skip_after_miss = skip_after_miss * 2 + 1 < kMostTilesAfterMiss ? skip_after_miss * 2 + 1
                                                                        : kMostTilesAfterMiss;
      }
      list_alone(m + rows);
    }
    for (size_t b = first_block; b < end_block; b += kGroupBlocks) {
      const size_t blocks = end_block - b < kGroupBlocks ? end_block - b : kGroupBlocks;
      for (size_t e = 0; e < listed; ++e) {
        const ListedRows& entry = entries[e];
        const uint32_t* list = lists + entry.start;
        if (entry.rows == 1) {
          row_group(entry.first_row, b, blocks, list, entry.count, SliceEnds{true, true});
        } else {
          shared_tile(entry.first_row, entry.rows, b, blocks, list, entry.count);
        }
      }
    }
  }
}

}  // namespace edgemt::kernels::x86
