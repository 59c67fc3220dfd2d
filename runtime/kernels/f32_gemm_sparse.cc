#include "kernels/f32_gemm_sparse.h"

#include <cmath>
#include <cstring>

#include "core/cpu_features.h"
#include "kernels/portable_math.h"

namespace edgemt::kernels::f32 {

void sparse_gemm_portable(const GemmArgs& a, size_t first_block, size_t block_count) {
  const PackedWeights& w = *a.weights;
  const float low = a.relu ? 0.0f : -INFINITY;
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    const float* block = w.blocks + b * w.depth * kBlockColumns;
    const size_t n0 = b * kBlockColumns;
    const size_t width = w.columns - n0 < kBlockColumns ? w.columns - n0 : kBlockColumns;
    for (size_t m = 0; m < a.rows; ++m) {
      const float* x = a.x + m * a.x_stride;
      float acc[kBlockColumns];
      for (size_t c = 0; c < kBlockColumns; ++c) acc[c] = w.bias[n0 + c];
      for (size_t k = 0; k < w.depth; ++k) {
        if (x[k] == 0.0f) continue;  // NaN is not skipped
        const float* wk = block + k * kBlockColumns;
        for (size_t c = 0; c < kBlockColumns; ++c) acc[c] = math::fma_f32(x[k], wk[c], acc[c]);
      }
      for (size_t c = 0; c < kBlockColumns; ++c) acc[c] = acc[c] > low ? acc[c] : low;
      std::memcpy(a.y + m * a.y_stride + n0, acc, width * sizeof(float));
    }
  }
}

GemmKernel sparse_gemm_kernel() {
  const GemmKernel dense = fast_gemm_kernel();
#if defined(__x86_64__)
  if (dense == gemm_avx512) return sparse_gemm_avx512;
  if (dense == gemm_avx2) return sparse_gemm_avx2;
#endif
  return dense == gemm_portable ? sparse_gemm_portable : nullptr;
}

size_t count_nonzeros(const float* x, size_t rows, size_t stride, size_t depth, size_t limit) {
  size_t count = 0;
  for (size_t m = 0; m < rows; ++m) {
    const float* row = x + m * stride;
    for (size_t k = 0; k < depth; ++k) count += row[k] == 0.0f ? 0 : 1;
    if (count > limit) return limit + 1;
  }
  return count;
}

bool has_non_finite_values(const float* v, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) return true;
  }
  return false;
}

}  // namespace edgemt::kernels::f32
