// The loop the zero-skipping kernels (f32_gemm_sparse.h, int8_gemm_sparse.h)
// share: blocks [first, first + count) in groups of up to kGroupBlocks, and
// for each group every row through row_groups[blocks - 1](args, m, b0), a
// row group that keeps that many blocks' sums in registers while the row's
// nonzero inputs pass. The group's weights stay in cache over the rows.
#pragma once

#include <cstddef>

namespace edgemt::kernels {

template <typename Args, size_t kGroupBlocks>
inline void run_row_groups(const Args& args, size_t first_block, size_t block_count,
                           void (*const (&row_groups)[kGroupBlocks])(const Args&, size_t, size_t)) {
  const size_t end = first_block + block_count;
  for (size_t b = first_block; b < end; b += kGroupBlocks) {
    const size_t blocks = end - b < kGroupBlocks ? end - b : kGroupBlocks;
    for (size_t m = 0; m < args.rows; ++m) row_groups[blocks - 1](args, m, b);
  }
}

}  // namespace edgemt::kernels
