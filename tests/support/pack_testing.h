// The checks of the packers of 16 whole rows (kernels/x86/pack_*.cc)
// against the packed layouts' definitions, for each instruction set's
// test: f32 block[k·16 + c] = lanes[c][k] on every depth 0-70 and a few
// long ones (the transposes and the depth's tail), NaN payloads and signed
// zeros kept bit for bit; int8 group g's bytes [c·4, c·4 + 4) = row c's
// bytes [4g, 4g + 4) for 0-40 groups and rows longer than the groups, with
// each row's sum and least byte (or 0) over them.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "kernels/f32_gemm.h"
#include "kernels/int8_gemm.h"
#include "support/kernel_testing.h"

namespace edgemt::testing {

using PackF32Rows = void (*)(const float* const* lanes, size_t depth, float* block);
using PackInt8Groups = void (*)(const int8_t* rows, size_t depth, size_t groups, int8_t* out,
                                int32_t* sums, int8_t* lows);

inline void check_f32_pack(PackF32Rows pack, uint32_t seed) {
  constexpr size_t kColumns = kernels::f32::kBlockColumns;
  Random rng(seed);
  for (size_t depth : lane_test_lengths()) {
    CAPTURE(depth);
    // 16 rows of `depth`, one apart from another by an odd stride.
    const size_t row_stride = depth + 3;
    std::vector<float> rows = rng.normal_vector(kColumns * row_stride, 0.0f, 1.0f);
    if (depth > 2) {
      rows[2] = -0.0f;
      rows[row_stride + 1] = float_of(0x7fc01234u);  // a NaN with a payload
    }
    const float* lanes[kColumns];
    for (size_t c = 0; c < kColumns; ++c) lanes[c] = rows.data() + c * row_stride;
    std::vector<float> block(depth * kColumns + 1, 7.0f);
    std::vector<float> want = block;
    pack(lanes, depth, block.data());
    for (size_t k = 0; k < depth; ++k) {
      for (size_t c = 0; c < kColumns; ++c) want[k * kColumns + c] = lanes[c][k];
    }
    CHECK(same_bits(block.data(), want.data(), block.size()));  // the float after untouched
  }
}

inline void check_int8_group_pack(PackInt8Groups pack, uint32_t seed) {
  using kernels::int8::kBlockColumns;
  using kernels::int8::kGroupBytes;
  using kernels::int8::kGroupDepth;
  Random rng(seed);
  for (size_t groups = 0; groups <= 40; ++groups) {
    for (size_t extra : {size_t{0}, size_t{3}, size_t{9}}) {  // depth past the groups packed
      CAPTURE(groups);
      CAPTURE(extra);
      const size_t depth = groups * kGroupDepth + extra;
      std::vector<int8_t> rows(kBlockColumns * depth);
      for (int8_t& x : rows) x = static_cast<int8_t>(rng.bits());
      std::vector<int8_t> out(groups * kGroupBytes + 1, 55), want(groups * kGroupBytes + 1, 55);
      if (groups == 7) rows[5 * depth + 6] = -128;  // the least byte a weight can hold
      int32_t sums[kBlockColumns];
      int8_t lows[kBlockColumns];
      pack(rows.data(), depth, groups, out.data(), sums, lows);
      int32_t want_sums[kBlockColumns] = {};
      int8_t want_lows[kBlockColumns] = {};
      for (size_t g = 0; g < groups; ++g) {
        for (size_t c = 0; c < kBlockColumns; ++c) {
          for (size_t j = 0; j < kGroupDepth; ++j) {
            const int8_t x = rows[c * depth + g * kGroupDepth + j];
            want[g * kGroupBytes + c * kGroupDepth + j] = x;
            want_sums[c] += x;
            want_lows[c] = x < want_lows[c] ? x : want_lows[c];
          }
        }
      }
      CHECK(out == want);  // the byte after untouched
      for (size_t c = 0; c < kBlockColumns; ++c) {
        CAPTURE(c);
        CHECK(sums[c] == want_sums[c]);
        CHECK(lows[c] == want_lows[c]);
      }
    }
  }
}

}  // namespace edgemt::testing
