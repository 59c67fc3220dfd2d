#include "kernels/layer_norm.h"

#include <cmath>

#include "core/cpu_features.h"
#include "kernels/reduce.h"

namespace edgemt::kernels {
namespace {

// Normalizes one row of `dim` floats; x may equal y (the last pass is
// element-wise). Corrected two-pass moments: mean0 = sum(x)/n, then with
// d = x - mean0 both sum(d) and sum(d²) in one pass:
//   mean = mean0 + sum(d)/n,   var = sum(d²)/n - (sum(d)/n)²   (biased, as torch)
// (sums in fixed-order lanes and blocks, see reduce.h).
// The correction term removes most of the rounding error of mean0 (it
// matters for rows whose mean is large against their spread); a one-pass
// E[x²] - E[x]² would cancel catastrophically there.
void normalize_row(const float* x, const float* __restrict gamma, const float* __restrict beta,
                   size_t dim, float eps, float* y) {
  const float inv_dim = 1.0f / static_cast<float>(dim);
  const float mean0 = detail::sum(x, dim) * inv_dim;
  float sum_d = 0.0f;
  float sum_d2 = 0.0f;
  detail::sum_deviations(x, dim, mean0, &sum_d, &sum_d2);
  const float correction = sum_d * inv_dim;
  float var = sum_d2 * inv_dim - correction * correction;
  var = var < 0.0f ? 0.0f : var;  // rounding can leave -tiny for constant rows
  const float rstd = 1.0f / std::sqrt(var + eps);
  // x - mean as (x - mean0) - correction: x - mean0 is nearly exact for x
  // close to the mean, whereas mean0 + correction rounded to one float would
  // lose up to half an ulp of the mean (3e-5 at a mean of 1000).
  for (size_t i = 0; i < dim; ++i) {
    y[i] = ((x[i] - mean0) - correction) * rstd * gamma[i] + beta[i];
  }
}

}  // namespace

void layer_norm_portable(const float* x, const float* gamma, const float* beta, size_t rows,
                         size_t dim, float eps, float* y) {
  if (dim == 0) return;
  for (size_t r = 0; r < rows; ++r) normalize_row(x + r * dim, gamma, beta, dim, eps, y + r * dim);
}

void add_layer_norm_portable(const float* x, const float* residual, const float* gamma,
                             const float* beta, size_t rows, size_t dim, float eps, float* y) {
  if (dim == 0) return;
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    const float* rr = residual + r * dim;
    float* yr = y + r * dim;
    // The sum goes to y first (element-wise, so y may alias x or residual),
    // then y is normalized in place: LayerNorm(fl(x + residual)) as PyTorch.
    for (size_t i = 0; i < dim; ++i) yr[i] = xr[i] + rr[i];
    normalize_row(yr, gamma, beta, dim, eps, yr);
  }
}

#if defined(__x86_64__)
void layer_norm_avx2(const float* x, const float* gamma, const float* beta, size_t rows,
                     size_t dim, float eps, float* y) {
  if (dim == 0) return;
  normalize_rows_avx2(x, nullptr, gamma, beta, rows, dim, eps, y);
}

void add_layer_norm_avx2(const float* x, const float* residual, const float* gamma,
                         const float* beta, size_t rows, size_t dim, float eps, float* y) {
  if (dim == 0) return;
  normalize_rows_avx2(x, residual, gamma, beta, rows, dim, eps, y);
}
#endif

void layer_norm(const float* x, const float* gamma, const float* beta, size_t rows, size_t dim,
                float eps, float* y) {
#if defined(__x86_64__)
  if (cpu_features().avx2) {
    layer_norm_avx2(x, gamma, beta, rows, dim, eps, y);
    return;
  }
#endif
  layer_norm_portable(x, gamma, beta, rows, dim, eps, y);
}

void add_layer_norm(const float* x, const float* residual, const float* gamma, const float* beta,
                    size_t rows, size_t dim, float eps, float* y) {
#if defined(__x86_64__)
  if (cpu_features().avx2) {
    add_layer_norm_avx2(x, residual, gamma, beta, rows, dim, eps, y);
    return;
  }
#endif
  add_layer_norm_portable(x, residual, gamma, beta, rows, dim, eps, y);
}

}  // namespace edgemt::kernels
