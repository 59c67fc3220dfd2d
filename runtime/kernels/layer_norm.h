// LayerNorm kernels (own: XNNPACK 2022 has none).
//
//   y[r, :] = (x[r, :] - mean_r) / sqrt(var_r + eps) * gamma + beta
//
// with the biased variance, as torch.nn.LayerNorm. Rows are contiguous with
// `dim` floats each. Run-phase safe: no allocation, no state.
#pragma once

#include <cstddef>

namespace edgemt::kernels {

// The fastest variant this CPU runs (core/cpu_features.h); every variant
// computes the portable one's bits.
//
// x, y: [rows, dim]; gamma, beta: [dim]. y may alias x.
void layer_norm(const float* x, const float* gamma, const float* beta, size_t rows,
                size_t dim, float eps, float* y);

// Post-norm residual step fused: y = LayerNorm(x + residual).
// x, residual, y: [rows, dim]; y may alias x or residual.
void add_layer_norm(const float* x, const float* residual, const float* gamma,
                    const float* beta, size_t rows, size_t dim, float eps, float* y);

void layer_norm_portable(const float* x, const float* gamma, const float* beta, size_t rows,
                         size_t dim, float eps, float* y);
void add_layer_norm_portable(const float* x, const float* residual, const float* gamma,
                             const float* beta, size_t rows, size_t dim, float eps, float* y);

#if defined(__x86_64__)
// The portable rows' bits with AVX2 (x86/layer_norm_avx2.cc) on `rows`
// rows ([rows, dim]; y may equal x), several side by side; with a residual
// ([rows, dim], or nullptr) on fl(x + residual), as add_layer_norm (y may
// alias x or residual).
void normalize_rows_avx2(const float* x, const float* residual, const float* gamma,
                         const float* beta, size_t rows, size_t dim, float eps, float* y);
void layer_norm_avx2(const float* x, const float* gamma, const float* beta, size_t rows,
                     size_t dim, float eps, float* y);
void add_layer_norm_avx2(const float* x, const float* residual, const float* gamma,
                         const float* beta, size_t rows, size_t dim, float eps, float* y);
#endif

}  // namespace edgemt::kernels
