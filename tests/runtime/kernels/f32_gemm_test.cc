// The own f32 GEMM: every kernel against a naive reference with the same
// arithmetic (std::fma per depth step from the bias, exact bits), and the
// packed layout's row access.
#include "kernels/f32_gemm.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/cpu_features.h"
#include "support/kernel_testing.h"

namespace edgemt::kernels::f32 {
namespace {

using testing::Random;

struct Packed {
  std::vector<uint8_t> storage;
  PackedWeights weights;
};

Packed pack(const std::vector<float>& w, const std::vector<float>& bias, size_t n, size_t k) {
  Packed p;
  p.storage.resize(packed_bytes(n, k) + 64);
  void* aligned = p.storage.data() + (64 - reinterpret_cast<uintptr_t>(p.storage.data()) % 64) % 64;
  pack_weights(w.data(), bias.empty() ? nullptr : bias.data(), n, k, aligned, &p.weights);
  return p;
}

void check_kernel(GemmKernel kernel) {
  Random rng(61);
  for (size_t m : {1, 2, 7, 8, 9, 33}) {
    for (size_t k : {1, 7, 64, 256}) {
      for (size_t n : {1, 15, 16, 17, 100}) {
        CAPTURE(m);
        CAPTURE(k);
        CAPTURE(n);
        const std::vector<float> x = rng.normal_vector(m * k, 0.0f, 1.0f);
        const std::vector<float> w = rng.normal_vector(n * k, 0.0f, 0.5f);
        const std::vector<float> bias = rng.normal_vector(n, 0.0f, 1.0f);
        const Packed p = pack(w, bias, n, k);
        std::vector<float> want(m * n);
        for (size_t i = 0; i < m; ++i) {
          for (size_t j = 0; j < n; ++j) {
            float acc = bias[j];
            for (size_t d = 0; d < k; ++d) acc = std::fma(x[i * k + d], w[j * k + d], acc);
            want[i * n + j] = acc;
          }
        }
        std::vector<float> got(m * n, NAN);
        GemmArgs args;
        args.x = x.data();
        args.x_stride = k;
        args.rows = m;
        args.weights = &p.weights;
        args.y = got.data();
        args.y_stride = n;
        // Two calls over two halves of the blocks: the split of the pool.
        const size_t half = p.weights.block_count / 2;
        kernel(args, 0, half);
        kernel(args, half, p.weights.block_count - half);
        CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("kernels/f32_gemm: portable kernel equals the fma reference bit for bit") {
  check_kernel(gemm_portable);
}

#if defined(__x86_64__)
TEST_CASE("kernels/f32_gemm: AVX-512 kernel equals the fma reference bit for bit" * doctest::skip(!cpu_features().avx512)) {
  check_kernel(gemm_avx512);
}
#endif

TEST_CASE("kernels/f32_gemm: unpack_row gives back each row of W") {
  Random rng(62);
  const size_t n = 37, k = 19;
  const std::vector<float> w = rng.normal_vector(n * k, 0.0f, 1.0f);
  const Packed p = pack(w, {}, n, k);
  std::vector<float> row(k);
  for (size_t i = 0; i < n; ++i) {
    unpack_row(p.weights, i, row.data());
    CHECK(std::memcmp(row.data(), w.data() + i * k, k * sizeof(float)) == 0);
  }
  // Without a bias the pack's bias is zero, padding columns included.
  for (size_t c = 0; c < p.weights.block_count * kBlockColumns; ++c) CHECK(p.weights.bias[c] == 0.0f);
}

}  // namespace
}  // namespace edgemt::kernels::f32
