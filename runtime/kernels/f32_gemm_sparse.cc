#include "kernels/f32_gemm_sparse.h"

#include <cmath>

namespace edgemt::kernels::f32 {

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
