// Prefetch of a GEMM's output rows, for the walkers that pass every row over
// a few blocks of columns at a time (int8 run_tiles, the f32 kernels).
//
// Their rows are up to 128 separate streams of stores, more than a hardware
// prefetcher follows: with an output larger than the caches (the output
// projection at batch 32 × beam 4: 128 × 58,101 floats, 29.7 MB) every
// tile's stores otherwise wait for memory. So each group of rows asks for
// the lines it will write in the walker's next pass, into the outer caches,
// for writing. M 128 K 512 N 58101 on an Intel Xeon (cpu family 6 model
// 207): BM_Int8GemmFullCodes avx512-vnni 385-417 -> 470-527 GFLOP/s,
// avx-vnni 149-161 -> 208-218; BM_PackedF32Gemm (AVX-512) 122-124 ->
// 136-138. Outputs that fit the caches (N 2048) and M 32 measured the
// same. The AVX2 kernels, slower, were not waiting on their stores. Not below kPrefetchOutputRows rows, which the hardware
// follows, and where the prefetches cost M 1 K 256 N 8000 7%.
#pragma once

#include <cstddef>

namespace edgemt::kernels {

inline constexpr size_t kPrefetchOutputRows = 16;

// Lines of y [rows from m, y_stride] at columns [first, last).
inline void prefetch_output(const float* y, size_t y_stride, size_t m, size_t rows, size_t first,
                            size_t last) {
  constexpr size_t kFloatsPerLine = 16;  // 64-byte lines
  for (size_t r = m; r < m + rows; ++r) {
    for (size_t n = first; n < last; n += kFloatsPerLine) __builtin_prefetch(y + r * y_stride + n, 1, 1);
  }
}

}  // namespace edgemt::kernels
