#include "kernels/f32_gemm_sparse.h"

#include <cmath>
#include <cstdint>

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
    // Eight running counts that compilers turn into vector compares (x86's
    // baseline SSE2 included: a quarter of the scalar loop's time, which was
    // 1% of an fp32 student's batch-32 run); != is true for NaN.
    uint32_t lanes[8] = {};
    size_t k = 0;
    for (; k + 8 <= depth; k += 8) {
      for (size_t j = 0; j < 8; ++j) lanes[j] += row[k + j] != 0.0f ? 1u : 0u;
    }
    for (; k < depth; ++k) count += row[k] != 0.0f ? 1 : 0;
    for (uint32_t lane : lanes) count += lane;
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
