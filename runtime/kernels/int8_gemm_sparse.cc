#include "kernels/int8_gemm_sparse.h"

#include "kernels/int8_gemm_variants.h"

namespace edgemt::kernels::int8 {

void sparse_gemm_portable(const GemmArgs& a, size_t first_block, size_t block_count) {
  const PackedWeights& w = *a.weights;
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    const int8_t* block = w.blocks + b * w.groups * kGroupBytes;
    const size_t n0 = b * kBlockColumns;
    const size_t width = w.columns - n0 < kBlockColumns ? w.columns - n0 : kBlockColumns;
    for (size_t m = 0; m < a.rows; ++m) {
      const int8_t* xr = a.xq + m * a.xq_stride;
      int32_t sum[kBlockColumns] = {};
      for (size_t g = 0; g < w.groups; ++g) {
        const int8_t* xg = xr + g * kGroupDepth;
        if (load_group(xg) == 0) continue;
        const int8_t* group = block + g * kGroupBytes;
        for (size_t c = 0; c < kBlockColumns; ++c) {
          for (size_t j = 0; j < kGroupDepth; ++j) {
            sum[c] += static_cast<int32_t>(xg[j]) * group[c * kGroupDepth + j];
          }
        }
      }
      dequantize_row(a, m, n0, sum, width);
    }
  }
}

GemmKernel sparse_gemm_kernel(GemmKernel dense) {
#if defined(__x86_64__)
  if (dense == gemm_avx512_vnni) return sparse_gemm_avx512_vnni;
  if (dense == gemm_avx2 || dense == gemm_avx2_vpsignb || dense == gemm_avx512bw ||
      dense == gemm_avx_vnni) {
    return sparse_gemm_avx2;
  }
#elif defined(__aarch64__)
  if (dense == gemm_neon_dotprod) return sparse_gemm_neon_dotprod;
#endif
  return dense == gemm_portable ? sparse_gemm_portable : nullptr;
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
