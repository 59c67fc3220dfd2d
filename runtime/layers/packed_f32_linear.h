// PackedF32Linear: y = x · Wᵀ + b for an f32 matrix on the runtime's own f32
// GEMM (kernels/f32_gemm.h): every f32 matrix where the own kernel is faster
// than XNNPACK (f32::replaces_xnnpack()), and a tied output projection
// wherever there is a fast kernel, since its pack also serves the embedding
// rows (the matrix is resident once). The same bits as the matrix on
// XNNPACK, fused ReLU included (the kernel's contract).
//
// Load phase: create() packs W [out, in] + bias into one buffer of its own.
// Run phase: run() splits the column blocks over the thread pool when worth
// it; no allocation, the same bits for any thread count. Not thread-safe per
// instance: one Translator owns it.
#pragma once

#include <cstddef>

#include "core/parallel.h"
#include "edgemt/status.h"
#include "kernels/f32_gemm.h"
#include "layers/packed_matrix.h"
#include "layers/unpacked_f32_linear.h"

namespace edgemt {

class PackedF32Linear {
 public:
  // kUnsupported when this CPU has no fast kernel for it
  // (kernels::f32::fast_gemm_kernel()); kOutOfMemory.
  [[nodiscard]] Status create(const float* weight, const float* bias, size_t in_features,
                              size_t out_features, bool relu);
  // The same from a matrix read in place, packed 1024 rows at a time with
  // each part's pages released once packed (UnpackedF32Linear::release_rows):
  // the matrix is never resident whole beside its pack.
  [[nodiscard]] Status create(const UnpackedF32Linear& rows, bool relu);
  void run(const float* x, size_t rows, float* y, const Parallel& parallel) const;

  // Load phase: the input is a ReLU's output (a feed-forward block's second
  // matrix), so run() takes the zero-skipping kernel (kernels/
  // f32_gemm_sparse.h) for inputs with at most one nonzero value in
  // kSparseDepthPerNonzero: the same y. Nothing changes for weights that
  // are not all finite (there a skipped 0 · inf would have made a NaN) or
  // where this build has no such kernel. Returns whether it is on.
  bool set_sparse_input();
  bool sparse_input() const { return sparse_kernel_ != nullptr; }

  size_t out_features() const { return packed_.view().columns; }
  size_t packed_bytes() const { return packed_.bytes(); }
  const kernels::f32::PackedWeights& packed() const { return packed_.view(); }

 private:
  static constexpr size_t kSparseDepthPerNonzero = 4;
  static constexpr size_t kCountedRows = 16;  // rows run() looks at to choose

  PackedMatrix<kernels::f32::PackedWeights> packed_;
  kernels::f32::GemmKernel kernel_ = nullptr;
  kernels::f32::GemmKernel sparse_kernel_ = nullptr;  // set_sparse_input()
  bool relu_ = false;
};

}  // namespace edgemt
