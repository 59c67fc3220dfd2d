// The feed-forward activation over a sub-layer's hidden rows, split over
// the run phase's threads. ReLU is fused into the GEMM; GELU and SiLU run
// here, each row on its own, so the bits never depend on the split.
#pragma once

#include <cstddef>

#include "core/parallel.h"
#include "kernels/activation.h"

namespace edgemt::transformer {

// x: [rows, dim], in place.
void activation_step(const Parallel& parallel, Activation activation, float* x, size_t rows, size_t dim);

}  // namespace edgemt::transformer
