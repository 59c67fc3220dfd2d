#include "models/transformer/residual.h"

#include "kernels/layer_norm.h"

namespace edgemt::transformer {

namespace {

// A LayerNorm row costs ~1 ns per element (three vectorized passes).
constexpr size_t row_nanoseconds(size_t dim) { return dim; }

}  // namespace

void residual_step(const Parallel& parallel, NormPlacement placement, const NormWeights& norm,
                   float eps, const float* sublayer_out, size_t rows, size_t dim, float* x) {
  auto row = [&](size_t r, size_t) {
    float* xr = x + r * dim;
    const float* sr = sublayer_out + r * dim;
    if (placement == NormPlacement::kPostNorm) {
      kernels::add_layer_norm(xr, sr, norm.weight, norm.bias, 1, dim, eps, xr);
      return;
    }
    for (size_t i = 0; i < dim; ++i) xr[i] += sr[i];
  };
  parallel_for(parallel, rows, row_nanoseconds(dim), row);
}

const float* sublayer_input(const Parallel& parallel, NormPlacement placement,
                            const NormWeights& norm, float eps, const float* x, size_t rows,
                            size_t dim, float* scratch) {
  if (placement == NormPlacement::kPostNorm) return x;
  auto row = [&](size_t r, size_t) {
    kernels::layer_norm(x + r * dim, norm.weight, norm.bias, 1, dim, eps, scratch + r * dim);
  };
  parallel_for(parallel, rows, row_nanoseconds(dim), row);
  return scratch;
}

}  // namespace edgemt::transformer
