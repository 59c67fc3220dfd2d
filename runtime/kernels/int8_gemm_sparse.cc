#include "kernels/int8_gemm_sparse.h"

#include "kernels/int8_gemm_variants.h"

namespace edgemt::kernels::int8 {

GemmKernel sparse_gemm_kernel(GemmKernel dense) {
#if defined(__x86_64__)
  if (dense == gemm_avx512_vnni) return sparse_gemm_avx512_vnni;
  if (dense == gemm_avx512bw) return sparse_gemm_avx512bw;
  if (dense == gemm_avx2 || dense == gemm_avx2_vpsignb || dense == gemm_avx_vnni) {
    return sparse_gemm_avx2;
  }
#elif defined(__aarch64__)
  if (dense == gemm_neon_dotprod) return sparse_gemm_neon_dotprod;
#endif
  // The portable kernel skips zero groups itself.
  return dense == gemm_portable ? gemm_portable : nullptr;
}

size_t count_nonzero_groups(const int8_t* xq, size_t rows, size_t stride, size_t groups,
                            size_t limit) {
  size_t count = 0;
  for (size_t m = 0; m < rows; ++m) {
    const int8_t* row = xq + m * stride;
    for (size_t g = 0; g < groups; ++g) count += load_group(row + g * kGroupDepth) == 0 ? 0 : 1;
    if (count > limit) return limit + 1;
  }
  return count;
}

}  // namespace edgemt::kernels::int8
