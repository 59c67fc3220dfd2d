// The AVX-512 packing of 16 whole rows against the packed layout's
// definition, block[k·16 + c] = lanes[c][k], on every depth 0-70 and a few
// long ones (the 16 × 16 transposes and the depth's tail), NaN payloads
// and signed zeros kept bit for bit (pack_weights through the kernel the
// CPU picks: ../f32_gemm_test.cc, unpack_row). Skipped on CPUs without AVX-512.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/f32_gemm.h"
#include "support/kernel_testing.h"

namespace edgemt::kernels::f32 {
namespace {

using testing::Random;

TEST_CASE("kernels/f32_pack_avx512: the packed layout, bit for bit" * doctest::skip(!cpu_features().avx512)) {
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
