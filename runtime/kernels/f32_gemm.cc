#include "kernels/f32_gemm.h"

#include <cmath>
#include <cstring>

#include "core/cpu_features.h"
#include "kernels/portable_math.h"

namespace edgemt::kernels::f32 {

size_t packed_bytes(size_t columns, size_t depth) {
  const size_t blocks = (columns + kBlockColumns - 1) / kBlockColumns;
  return blocks * kBlockColumns * (depth + 1) * sizeof(float);
}

void pack_block_range(const float* w, const float* bias, size_t columns, size_t depth,
                      size_t first_block, size_t block_count, void* storage) {
  const size_t blocks = (columns + kBlockColumns - 1) / kBlockColumns;
  float* packed = static_cast<float*>(storage);
  float* packed_bias = packed + blocks * depth * kBlockColumns;
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    float* block = packed + b * depth * kBlockColumns;
    for (size_t c = 0; c < kBlockColumns; ++c) {
      const size_t n = b * kBlockColumns + c;
      for (size_t k = 0; k < depth; ++k) block[k * kBlockColumns + c] = n < columns ? w[n * depth + k] : 0.0f;
      packed_bias[n] = n < columns && bias != nullptr ? bias[n] : 0.0f;
    }
  }
}

void pack_weights(const float* w, const float* bias, size_t columns, size_t depth, void* storage,
                  PackedWeights* out) {
  const size_t blocks = (columns + kBlockColumns - 1) / kBlockColumns;
  pack_block_range(w, bias, columns, depth, 0, blocks, storage);
  float* packed = static_cast<float*>(storage);
  float* packed_bias = packed + blocks * depth * kBlockColumns;
  out->blocks = packed;
  out->bias = packed_bias;
  out->columns = columns;
  out->depth = depth;
  out->block_count = blocks;
}

void unpack_row(const PackedWeights& w, size_t n, float* out) {
  const float* column = w.blocks + (n / kBlockColumns) * w.depth * kBlockColumns + n % kBlockColumns;
  for (size_t k = 0; k < w.depth; ++k) out[k] = column[k * kBlockColumns];
}

void gemm_portable(const GemmArgs& a, size_t first_block, size_t block_count) {
  const PackedWeights& w = *a.weights;
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    const float* block = w.blocks + b * w.depth * kBlockColumns;
    const size_t n0 = b * kBlockColumns;
    const size_t width = w.columns - n0 < kBlockColumns ? w.columns - n0 : kBlockColumns;
    for (size_t m = 0; m < a.rows; ++m) {
      const float* x = a.x + m * a.x_stride;
      float acc[kBlockColumns];
      for (size_t c = 0; c < kBlockColumns; ++c) acc[c] = w.bias[n0 + c];
      for (size_t k = 0; k < w.depth; ++k) {
        const float* wk = block + k * kBlockColumns;
        for (size_t c = 0; c < kBlockColumns; ++c) acc[c] = math::fma_f32(x[k], wk[c], acc[c]);
      }
      const float low = a.relu ? 0.0f : -INFINITY;
      for (size_t c = 0; c < kBlockColumns; ++c) acc[c] = acc[c] > low ? acc[c] : low;
      std::memcpy(a.y + m * a.y_stride + n0, acc, width * sizeof(float));
    }
  }
}

GemmKernel fast_gemm_kernel() {
#if defined(__x86_64__)
  const CpuFeatures& cpu = cpu_features();
  if (cpu.avx512) return gemm_avx512;
  return cpu.avx2 && cpu.fma ? gemm_avx2 : nullptr;
#elif defined(__aarch64__)
  return cpu_features().neon ? gemm_neon : gemm_portable;
#elif defined(__wasm_simd128__)
  return gemm_wasm_simd;
#elif !EDGEMT_WITH_XNNPACK
  return gemm_portable;  // a build without XNNPACK has no other
#else
  return nullptr;
#endif
}

const char* fast_gemm_kernel_name() {
  const GemmKernel kernel = fast_gemm_kernel();
#if defined(__x86_64__)
  if (kernel == gemm_avx512) return "avx512";
  if (kernel == gemm_avx2) return "avx2+fma3";
#elif defined(__aarch64__)
  if (kernel == gemm_neon) return "neon";
#elif defined(__wasm_simd128__)
  if (kernel == gemm_wasm_simd) return "wasm-simd128";
#endif
  return kernel == gemm_portable ? "portable" : "";
}

bool replaces_xnnpack() {
#if !EDGEMT_WITH_XNNPACK
  return true;  // nothing to replace: every f32 matrix is on the own GEMM
#elif defined(__x86_64__)
  return fast_gemm_kernel() != nullptr;
#else
  return false;
#endif
}

}  // namespace edgemt::kernels::f32
