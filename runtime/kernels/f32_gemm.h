// f32 GEMM on the runtime's own packed layout, for the one matrix a model
// reads both ways: a tied output projection, whose rows are also the
// embedding table. Packing it once and serving embedding rows from the pack
// (kernels/embedding.h) keeps it resident once instead of twice (XNNPACK's
// packed copy plus the file's table: 8 MiB at 8k × 256 in f32).
//
//   y[m, n] = bias[n] + Σ_k x[m, k] · w[n, k]
//
// accumulated for k = 0, 1, 2, ... with one fused multiply-add per step
// (acc = fma(x, w, acc), starting from the bias): the order and rounding of
// XNNPACK's f32 GEMM micro-kernels, so y has the bits a Linear on XNNPACK
// gives (tests/runtime/kernels/f32_gemm_test.cc checks it against one).
//
// Packed layout: output columns in blocks of 16; block b is [K][16] floats,
// blocks[(b·K + k)·16 + c] = w[16·b + c][k] (zero past N), then the bias,
// [block_count·16] (zero past N or without a bias).
#pragma once

#include <cstddef>

namespace edgemt::kernels::f32 {

inline constexpr size_t kBlockColumns = 16;

struct PackedWeights {
  const float* blocks = nullptr;  // [block_count, K, 16]
  const float* bias = nullptr;    // [block_count·16]
  size_t columns = 0;             // N
  size_t depth = 0;               // K
  size_t block_count = 0;         // ceil(N / 16)
};

// Bytes pack_weights needs for an [N, K] matrix.
size_t packed_bytes(size_t columns, size_t depth);

// Packs w [N, K] (row-major) and bias [N] (or nullptr) into `storage`
// (packed_bytes(N, K) bytes, 64-byte aligned).
void pack_weights(const float* w, const float* bias, size_t columns, size_t depth, void* storage,
                  PackedWeights* out);

// Row n of w (the embedding row of id n) from the pack: out[k] = w[n][k].
void unpack_row(const PackedWeights& w, size_t n, float* out);

struct GemmArgs {
  const float* x = nullptr;  // [rows, x_stride]
  size_t x_stride = 0;
  size_t rows = 0;
  const PackedWeights* weights = nullptr;
  float* y = nullptr;        // [rows, y_stride]; only columns < N are written
  size_t y_stride = 0;
};

// Computes the columns of blocks [first_block, first_block + block_count).
using GemmKernel = void (*)(const GemmArgs& args, size_t first_block, size_t block_count);

// The portable kernel (std::fma per step; every CPU).
void gemm_portable(const GemmArgs& args, size_t first_block, size_t block_count);
#if defined(__x86_64__)
void gemm_avx512(const GemmArgs& args, size_t first_block, size_t block_count);
#endif

// The kernel that runs this matrix at least as fast as XNNPACK would: the
// AVX-512 one on x86 CPUs that have it, the portable one on AArch64 (where
// std::fma is an instruction and the loop vectorizes); nullptr elsewhere
// (x86 without AVX-512: XNNPACK keeps the matrix).
GemmKernel fast_gemm_kernel();

}  // namespace edgemt::kernels::f32
