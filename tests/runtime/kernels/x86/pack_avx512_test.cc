// The AVX-512 packing of 16 whole rows against the packed layouts'
// definitions: f32 block[k·16 + c] = lanes[c][k] on every depth 0-70 and a
// few long ones (the transposes and the depth's tail), NaN payloads and
// signed zeros kept bit for bit; int8 group g's bytes [c·4, c·4 + 4) =
// row c's bytes [4g, 4g + 4) for 0-40 groups and rows longer than the
// groups, with each row's sum and least byte (or 0) over them.
// pack_weights through the kernel the CPU picks: ../f32_gemm_test.cc
// (unpack_row) and ../int8_gemm_test.cc. Skipped on CPUs without AVX-512.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/f32_gemm.h"
#include "kernels/int8_gemm_variants.h"
#include "support/kernel_testing.h"

namespace edgemt::kernels::f32 {
namespace {

using testing::Random;

TEST_CASE("kernels/pack_avx512: f32, the packed layout, bit for bit" *
          doctest::skip(!cpu_features().avx512)) {
  Random rng(71);
  std::vector<size_t> depths;
  for (size_t d = 0; d <= 70; ++d) depths.push_back(d);
  for (size_t d : {256, 512, 1000}) depths.push_back(d);
  for (size_t depth : depths) {
    CAPTURE(depth);
    // 16 rows of `depth`, one apart from another by an odd stride.
    const size_t row_stride = depth + 3;
    std::vector<float> rows = rng.normal_vector(kBlockColumns * row_stride, 0.0f, 1.0f);
    if (depth > 2) {
      rows[2] = -0.0f;
      rows[row_stride + 1] = testing::float_of(0x7fc01234u);  // a NaN with a payload
    }
    const float* lanes[kBlockColumns];
    for (size_t c = 0; c < kBlockColumns; ++c) lanes[c] = rows.data() + c * row_stride;
    std::vector<float> block(depth * kBlockColumns + 1, 7.0f), want(depth * kBlockColumns + 1, 7.0f);
    pack_rows_block_avx512(lanes, depth, block.data());
    for (size_t k = 0; k < depth; ++k) {
      for (size_t c = 0; c < kBlockColumns; ++c) want[k * kBlockColumns + c] = lanes[c][k];
    }
    CHECK(testing::same_bits(block.data(), want.data(), block.size()));  // the float after untouched
  }
}

}  // namespace
}  // namespace edgemt::kernels::f32

namespace edgemt::kernels::int8 {
namespace {

TEST_CASE("kernels/pack_avx512: int8 groups byte for byte, their sums and least bytes" *
          doctest::skip(!cpu_features().avx512)) {
  testing::Random rng(75);
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
      pack_groups_avx512(rows.data(), depth, groups, out.data(), sums, lows);
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

}  // namespace
}  // namespace edgemt::kernels::int8
