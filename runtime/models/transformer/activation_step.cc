#include "models/transformer/activation_step.h"

namespace edgemt::transformer {

namespace {

// Rough cost per element: SiLU and GELU compute an exp or erf each (~1 ns
// in AVX2 on Zen 3, more with the portable loops), ReLU a compare.
constexpr size_t nanoseconds_per_row(Activation activation, size_t dim) {
  return activation == Activation::kRelu ? dim / 8 : dim;
}

}  // namespace

void activation_step(const Parallel& parallel, Activation activation, float* x, size_t rows, size_t dim) {
  auto row = [&](size_t r, size_t) { kernels::apply_activation(activation, x + r * dim, dim); };
  parallel_for(parallel, rows, nanoseconds_per_row(activation, dim), row);
}

}  // namespace edgemt::transformer
