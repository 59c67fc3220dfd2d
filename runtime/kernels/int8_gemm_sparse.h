// The int8 GEMM (int8_gemm.h) for activation codes that are mostly zero: a
// ReLU's output quantized, the input of a feed-forward block's second
// matrix (in a trained model nearly all of it; f32_gemm_sparse.h has the
// figures). These kernels find each row's groups of 4 codes that are not
// all zero (a compare over 8 or 16 groups at a time) and add only those
// groups' products. The sum is exact in int32 in any order, so leaving out
// groups whose products are 0 gives the dense kernels' sums, and the float
// part is int8_gemm_variants.h's dequantize() on them, as the portable
// kernel's: the same bits as every dense kernel, on every CPU.
//
// Per row, a group of blocks keeps its sums in registers while the row's
// nonzero groups pass (AVX-512 VNNI and BW: 8 blocks of 16 columns;
// AVX2: 4).
#pragma once

#include <cstddef>

#include "kernels/int8_gemm.h"

namespace edgemt::kernels::int8 {

// Same signature and contract as GemmKernel (blocks [first, first + count)).
// The portable one is gemm_portable itself, which skips zero groups too.
#if defined(__x86_64__)
void sparse_gemm_avx512_vnni(const GemmArgs& args, size_t first_block, size_t block_count);
void sparse_gemm_avx512bw(const GemmArgs& args, size_t first_block, size_t block_count);
void sparse_gemm_avx2(const GemmArgs& args, size_t first_block, size_t block_count);
#elif defined(__aarch64__)
void sparse_gemm_neon_dotprod(const GemmArgs& args, size_t first_block, size_t block_count);
#endif

// The zero-skipping kernel for a CPU whose dense kernel is `dense`
// (GemmVariant::kernel): AVX-512 VNNI's and AVX-512 BW's beside theirs,
// AVX2's beside the other x86 ones (AVX2, AVX-VNNI), NEON dot product's
// beside it, gemm_portable beside itself; nullptr elsewhere (NEON without
// the dot product, WebAssembly: not built there).
GemmKernel sparse_gemm_kernel(GemmKernel dense);

// Groups of 4 codes not all zero in xq [rows, stride] (stride: padded
// depth, `groups` groups per row), counted until the count exceeds `limit`
// (then limit + 1 is returned).
size_t count_nonzero_groups(const int8_t* xq, size_t rows, size_t stride, size_t groups,
                            size_t limit);

}  // namespace edgemt::kernels::int8
