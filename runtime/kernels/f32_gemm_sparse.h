// The f32 GEMM (f32_gemm.h) for inputs that are mostly zeros: a ReLU's
// output, the input of a feed-forward block's second matrix. In trained
// models nearly all of it is zero (the Multi30k checkpoint's encoder: 99.2-
// 99.7% of its 1,024 ReLU outputs per token over 100 test sentences), and
// the dense kernels multiply every one. These kernels find each row's
// nonzero x[m, k] (a compare over 8 or 16 at a time) and add only their
// terms, in k order from the bias, one fused multiply-add each, then the
// same clamp and stores:
//
//   y[m, n] = clamp(bias[n] + Σ_{k: x[m, k] != 0} x[m, k] · w[n, k])
//
// A skipped term is fma(±0, w, acc), which leaves acc as it is when w is
// finite (but for the sign of a zero acc: -0 + +0 is +0). So y holds the
// dense kernels' values, bit for bit but for the sign of a zero, wherever
// the weights are finite; callers take these kernels only for packs whose
// weights are (has_non_finite_values). NaN inputs count as nonzero.
//
// Per row, a group of blocks keeps its accumulators in registers while the
// row's nonzero terms pass (AVX-512: 8 blocks, 128 columns; AVX2: 4); the
// group's K·64 bytes per block stay in L2 over the rows. x86 also runs up
// to 6 rows whose nonzeros mostly coincide (a sentence's tokens) as one
// tile over their union (the zero terms it adds are fma(±0, w, acc), as
// above; x86/listed_rows.h).
#pragma once

#include <cstddef>

#include "kernels/f32_gemm.h"

namespace edgemt::kernels::f32 {

// Same signature and contract as GemmKernel (blocks [first, first + count)).
// The portable one shares gemm_portable's loop (f32_gemm.cc).
void sparse_gemm_portable(const GemmArgs& args, size_t first_block, size_t block_count);
#if defined(__x86_64__)
void sparse_gemm_avx512(const GemmArgs& args, size_t first_block, size_t block_count);
void sparse_gemm_avx2(const GemmArgs& args, size_t first_block, size_t block_count);  // + FMA3
#endif

// The zero-skipping kernel beside fast_gemm_kernel(): the AVX-512 or AVX2
// one where that is the fast kernel, the portable one where the portable
// kernel is; nullptr elsewhere (NEON, WebAssembly: not built there).
GemmKernel sparse_gemm_kernel();

// Nonzero (or NaN) values of x [rows, stride] in its first `depth` columns,
// counted until the count exceeds `limit` (then limit + 1 is returned):
// the run-time test of whether an input is sparse enough.
size_t count_nonzeros(const float* x, size_t rows, size_t stride, size_t depth, size_t limit);

// Whether some v[i], i < n, is infinite or NaN.
bool has_non_finite_values(const float* v, size_t n);

}  // namespace edgemt::kernels::f32
