// The own f32 GEMM: every kernel against a naive reference with the same
// arithmetic (math::fma_f32 per depth step from the bias, exact bits), and the
// packed layout's row access.
#include "kernels/f32_gemm.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "support/f32_gemm_reference.h"
#include "support/kernel_testing.h"

namespace edgemt::kernels::f32 {
namespace {

using testing::Random;

TEST_CASE("kernels/f32_gemm: portable kernel equals the fma reference bit for bit") {
  testing::check_f32_gemm_kernel(gemm_portable);
}

#if defined(__wasm_simd128__)
TEST_CASE("kernels/f32_gemm: WebAssembly SIMD kernel equals the fma reference bit for bit") {
  testing::check_f32_gemm_kernel(gemm_wasm_simd);
}
#endif

TEST_CASE("kernels/f32_gemm: unpack_row gives back each row of W") {
  Random rng(62);
  const size_t n = 37, k = 19;
  const std::vector<float> w = rng.normal_vector(n * k, 0.0f, 1.0f);
  const testing::PackedF32 p = testing::pack_f32(w, {}, n, k);
  std::vector<float> row(k);
  for (size_t i = 0; i < n; ++i) {
    unpack_row(p.weights, i, row.data());
    CHECK(std::memcmp(row.data(), w.data() + i * k, k * sizeof(float)) == 0);
  }
  // Without a bias the pack's bias is zero, padding columns included.
  for (size_t c = 0; c < p.weights.block_count * kBlockColumns; ++c) CHECK(p.weights.bias[c] == 0.0f);
}

TEST_CASE("kernels/f32_gemm: a pack says whether a weight is tiny (nonzero, below 2^-65)") {
  Random rng(64);
  const size_t n = 37, k = 19;
  std::vector<float> w = rng.normal_vector(n * k, 0.0f, 1.0f);
  CHECK(testing::pack_f32(w, {}, n, k).weights.tiny == TinyWeights::kNone);
  // Values that are not tiny: zeros, 2^-65 itself, NaN, infinities.
  w[3] = 0.0f;
  w[4] = -0.0f;
  w[5] = kTinyMagnitude;
  w[6] = -kTinyMagnitude;
  w[7] = NAN;
  w[8] = INFINITY;
  CHECK(testing::pack_f32(w, {}, n, k).weights.tiny == TinyWeights::kNone);
  for (float tiny : {std::ldexp(1.0f, -66), -std::ldexp(1.0f, -100), std::ldexp(1.0f, -149)}) {
    CAPTURE(tiny);
    std::vector<float> with_tiny = w;
    with_tiny[(n - 1) * k + k - 1] = tiny;  // the last column's last weight
    CHECK(testing::pack_f32(with_tiny, {}, n, k).weights.tiny == TinyWeights::kSome);
    // pack_block_range tells it of the part that holds it only.
    std::vector<uint8_t> storage(packed_bytes(n, k));
    CHECK(!pack_block_range(with_tiny.data(), nullptr, n, k, 0, 2, storage.data()));
    CHECK(pack_block_range(with_tiny.data(), nullptr, n, k, 2, 1, storage.data()));
    CHECK(!pack_block_range(with_tiny.data(), nullptr, n, k, 2, 1, storage.data(), nullptr, false));
    // A pack made for one product is not checked.
    PackedWeights unchecked;
    pack_weights(with_tiny.data(), nullptr, n, k, storage.data(), &unchecked, nullptr, false);
    CHECK(unchecked.tiny == TinyWeights::kUnknown);
  }
}

}  // namespace
}  // namespace edgemt::kernels::f32
