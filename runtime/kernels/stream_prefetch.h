// Prefetch of a weight stream ahead of its own reads, for the f32 GEMM tiles
// that read their blocks once, line after line (the AVX-512 kernel's tall
// tiles and 1-4 row tiles, the AVX2 kernel's one-row tile): the hardware
// prefetchers stop at each 4 KiB page, so the tile asks for the line a page
// ahead of the one it reads (f32_gemm_avx512.cc has the measurements).
// And of the next tile of the int8 GEMMs (prefetch_next_tile_group).
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

// The int8 GEMMs' tiles (x86): the first rows to meet a tile's weights (the
// first row group of a stripe, or of run_tiles' four blocks) read them from
// memory, NB streams a block (groups · 64 bytes, 2-32 KiB) apart, in group
// order or (the AVX2 kernel's lists) out of it, which the hardware
// prefetchers keep up with badly. Such a tile asks for the next tile's
// (the NB blocks after it) line of each group it reads, into L2: into L1 it
// would evict the tile's own. BM_Int8GemmDecoderChain (OPUS-MT-base's
// decoder step, 22 MB of weights), Zen 4, GFLOP/s, 1 row / 4 rows: AVX2
// 44 -> 77 / 87 -> 170, AVX-512 VNNI 82 -> 100 / 180 -> 327, avx512bw
// 47 -> 74 / 108 -> 157. Cache-hot products of one row lose 10-20%
// (BM_Int8GemmNormalizedCodes M 1: the prefetches' load slots), which a
// decoder, whose weights are many times L2, does not see.
// `group`: group g's 64 bytes in the tile's first block; an integer
// address, as above.
template <int NB>
__attribute__((always_inline)) inline void prefetch_next_tile_group(const int8_t* group,
                                                                    size_t block_stride) {
  const uintptr_t next = reinterpret_cast<uintptr_t>(group) + NB * block_stride;
  for (int nb = 0; nb < NB; ++nb) {
    __builtin_prefetch(reinterpret_cast<const void*>(next + nb * block_stride), 0, 2);
  }
}

}  // namespace edgemt::kernels
