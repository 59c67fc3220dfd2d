// The scalar parts of the packers of 16 whole rows (pack_avx512.cc,
// pack_avx2.cc): what is past the registers' multiple, one word at a
// time, and the least byte of each column's lane (internal header).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/f32_gemm.h"
#include "kernels/int8_gemm.h"

namespace edgemt::kernels::pack_tails {

// f32 depth steps [first, depth): block[k·16 + c] = lanes[c][k].
inline void copy_f32_steps(const float* const* lanes, size_t first, size_t depth, float* block) {
  for (size_t k = first; k < depth; ++k) {
    for (size_t c = 0; c < f32::kBlockColumns; ++c) block[k * f32::kBlockColumns + c] = lanes[c][k];
  }
}

// int8 group g of 16 rows (row c at rows + c·depth): its 64 bytes at out + 64·g.
inline void copy_int8_group(const int8_t* rows, size_t depth, size_t g, int8_t* out) {
  for (size_t c = 0; c < int8::kBlockColumns; ++c) {
    std::memcpy(out + g * int8::kGroupBytes + c * int8::kGroupDepth,
                rows + c * depth + g * int8::kGroupDepth, int8::kGroupDepth);
  }
}

// lows[c] = the least of bytes[4c .. 4c + 4), c < 16.
inline void least_of_lanes(const int8_t* bytes, int8_t* lows) {
  for (size_t c = 0; c < int8::kBlockColumns; ++c) {
    const int8_t* lane = bytes + c * int8::kGroupDepth;
    int8_t least = lane[0];
    for (size_t j = 1; j < int8::kGroupDepth; ++j) least = lane[j] < least ? lane[j] : least;
    lows[c] = least;
  }
}

}  // namespace edgemt::kernels::pack_tails
