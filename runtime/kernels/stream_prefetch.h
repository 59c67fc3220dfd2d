// Prefetch of a weight stream ahead of its own reads, for the f32 GEMM tiles
// that read their blocks once, line after line (the AVX-512 kernel's tall
// tiles and 1-4 row tiles, the AVX2 kernel's one-row tile): the hardware
// prefetchers stop at each 4 KiB page, so the tile asks for the line a page
// ahead of the one it reads (f32_gemm_avx512.cc has the measurements).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt::kernels {

inline constexpr size_t kStreamAheadBytes = 4096;

// The line kStreamAheadBytes past `line`, into L1. Past the last block of a
// pack that address may lie outside it, so it is made as an integer (a
// prefetch of any address is harmless; pointer arithmetic past the end
// would not be).
inline void prefetch_stream_ahead(const float* line) {
  const uintptr_t ahead = reinterpret_cast<uintptr_t>(line) + kStreamAheadBytes;
  __builtin_prefetch(reinterpret_cast<const void*>(ahead), 0, 3);
}

}  // namespace edgemt::kernels
