#include "models/transformer/residual.h"

#include "kernels/layer_norm.h"

namespace edgemt {

void residual_step(NormPlacement placement, const NormWeights& norm, float eps,
                   const float* sublayer_out, size_t rows, size_t dim, float* x) {
  if (placement == NormPlacement::kPostNorm) {
    kernels::add_layer_norm(x, sublayer_out, norm.weight, norm.bias, rows, dim, eps, x);
    return;
  }
  const size_t n = rows * dim;
  for (size_t i = 0; i < n; ++i) x[i] += sublayer_out[i];
}

const float* sublayer_input(NormPlacement placement, const NormWeights& norm, float eps,
                            const float* x, size_t rows, size_t dim, float* scratch) {
  if (placement == NormPlacement::kPostNorm) return x;
  kernels::layer_norm(x, norm.weight, norm.bias, rows, dim, eps, scratch);
  return scratch;
}

}  // namespace edgemt
