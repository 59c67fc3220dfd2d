// The own f32 GEMM's test harness (kernels/f32_gemm.h): packing into
// aligned storage, and a kernel checked against the naive reference with the
// same arithmetic (std::fma per depth step from the bias, exact bits).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/f32_gemm.h"
#include "support/kernel_testing.h"

namespace edgemt::testing {

struct PackedF32 {
  std::vector<uint8_t> storage;
  kernels::f32::PackedWeights weights;
};

inline PackedF32 pack_f32(const std::vector<float>& w, const std::vector<float>& bias, size_t n, size_t k) {
  PackedF32 p;
  p.storage.resize(kernels::f32::packed_bytes(n, k) + 64);
  void* aligned = p.storage.data() + (64 - reinterpret_cast<uintptr_t>(p.storage.data()) % 64) % 64;
  kernels::f32::pack_weights(w.data(), bias.empty() ? nullptr : bias.data(), n, k, aligned, &p.weights);
  return p;
}

inline void check_f32_gemm_kernel(kernels::f32::GemmKernel kernel) {
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
        const PackedF32 p = pack_f32(w, bias, n, k);
        std::vector<float> want(m * n);
        for (size_t i = 0; i < m; ++i) {
          for (size_t j = 0; j < n; ++j) {
            float acc = bias[j];
            for (size_t d = 0; d < k; ++d) acc = std::fma(x[i * k + d], w[j * k + d], acc);
            want[i * n + j] = acc;
          }
        }
        std::vector<float> got(m * n, NAN);
        kernels::f32::GemmArgs args;
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

}  // namespace edgemt::testing
