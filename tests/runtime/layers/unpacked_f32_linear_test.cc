// UnpackedF32Linear against PackedF32Linear (bit for bit: the same kernel on
// the same packed floats) and against a naive fused multiply-add chain, for
// shapes that end inside a block and inside a group of 4 blocks, with and
// without a bias, on 1 and 2 threads.
#include "layers/unpacked_f32_linear.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "layers/packed_f32_linear.h"
#include "support/aligned_floats.h"
#include "support/kernel_testing.h"
#include "support/thread_pool.h"

namespace edgemt {
namespace {

using testing::Random;

bool has_kernel() { return kernels::f32::fast_gemm_kernel() != nullptr; }

// y[m, n] = b[n] + Σ_k x[m, k]·w[n, k], one fma per k in order (the f32
// GEMM's contract), then max(y, -inf) (a NaN sum becomes -inf).
std::vector<float> naive(const std::vector<float>& x, const std::vector<float>& w, const float* b,
                         size_t rows, size_t in, size_t out) {
  std::vector<float> y(rows * out);
  for (size_t m = 0; m < rows; ++m) {
    for (size_t n = 0; n < out; ++n) {
      float acc = b != nullptr ? b[n] : 0.0f;
      for (size_t k = 0; k < in; ++k) acc = std::fma(x[m * in + k], w[n * in + k], acc);
      y[m * out + n] = acc > -INFINITY ? acc : -INFINITY;
    }
  }
  return y;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST_CASE("layers/unpacked_f32_linear: the packed product's bits" * doctest::skip(!has_kernel())) {
  Random rng(41);
  testing::Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  for (size_t out : {size_t{1}, size_t{16}, size_t{63}, size_t{64}, size_t{65}, size_t{300}}) {
    for (size_t in : {size_t{1}, size_t{5}, size_t{64}, size_t{96}}) {
      for (size_t rows : {size_t{1}, size_t{4}, size_t{9}}) {
        CAPTURE(out);
        CAPTURE(in);
        CAPTURE(rows);
        const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.5f);
        const std::vector<float> b = rng.normal_vector(out, 0.0f, 0.5f);
        const std::vector<float> x = rng.normal_vector(rows * in, 0.0f, 1.0f);
        for (bool with_bias : {false, true}) {
          const float* bias = with_bias ? b.data() : nullptr;
          PackedF32Linear packed;
          REQUIRE(packed.create(w.data(), bias, in, out, false).is_ok());
          UnpackedF32Linear unpacked;
          REQUIRE(unpacked.create(w.data(), bias, in, out).is_ok());
          CHECK(unpacked.in_features() == in);
          CHECK(unpacked.out_features() == out);
          std::vector<float> expected(rows * out);
          packed.run(x.data(), rows, expected.data(), Parallel());
          CHECK(same_bits(expected, naive(x, w, bias, rows, in, out)));
          for (size_t threads : {size_t{1}, size_t{2}}) {
            CAPTURE(threads);
            const Parallel parallel = threads == 1 ? Parallel() : Parallel(pool.get(), 0);
            testing::AlignedFloats scratch(parallel.workers * UnpackedF32Linear::scratch_floats(in));
            std::vector<float> y(rows * out, 7.0f);
            unpacked.run(x.data(), rows, y.data(), scratch.data(), parallel);
            CHECK(same_bits(y, expected));
          }
        }
      }
    }
  }
}

TEST_CASE("layers/unpacked_f32_linear: pack_blocks gives the whole pack's floats" * doctest::skip(!has_kernel())) {
  Random rng(42);
  const size_t in = 24, out = 70;  // 5 blocks, the last 6 columns wide
  const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 1.0f);
  const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
  PackedF32Linear packed;
  REQUIRE(packed.create(w.data(), b.data(), in, out, false).is_ok());
  UnpackedF32Linear unpacked;
  REQUIRE(unpacked.create(w.data(), b.data(), in, out).is_ok());
  const kernels::f32::PackedWeights& whole = packed.packed();
  testing::AlignedFloats scratch(UnpackedF32Linear::scratch_floats(in));
  for (size_t first = 0; first < whole.block_count; ++first) {
    for (size_t count = 1; count <= UnpackedF32Linear::kGroupBlocks && first + count <= whole.block_count;
         ++count) {
      CAPTURE(first);
      CAPTURE(count);
      kernels::f32::PackedWeights part;
      unpacked.pack_blocks(first, count, scratch.data(), &part);
      CHECK(part.block_count == count);
      CHECK(part.depth == in);
      const size_t floats = count * in * kernels::f32::kBlockColumns;
      CHECK(std::memcmp(part.blocks, whole.blocks + first * in * kernels::f32::kBlockColumns,
                        floats * sizeof(float)) == 0);
      CHECK(std::memcmp(part.bias, whole.bias + first * kernels::f32::kBlockColumns,
                        count * kernels::f32::kBlockColumns * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("layers/unpacked_f32_linear: an empty one") {
  UnpackedF32Linear none;
  CHECK(none.empty());
  CHECK(none.out_features() == 0);
}

}  // namespace
}  // namespace edgemt
