// The residual + LayerNorm step shared by every sub-layer, for both norm
// placements:
//   post-norm: x = LN(x + sublayer_out)
//   pre-norm:  x = x + sublayer_out        (the LN ran on the sub-layer input)
#pragma once

#include <cstddef>

#include "core/parallel.h"
#include "edgemt/model.h"
#include "models/transformer/weights.h"

namespace edgemt::transformer {

// x, sublayer_out: [rows, dim]; x is updated in place. Rows are
// independent: split over `parallel` when worth it (the same bits).
void residual_step(const Parallel& parallel, NormPlacement placement, const NormWeights& norm, float eps,
                   const float* sublayer_out, size_t rows, size_t dim, float* x);

// The input a sub-layer reads: LN(x) into `scratch` for pre-norm (returns
// scratch), x itself for post-norm.
const float* sublayer_input(const Parallel& parallel, NormPlacement placement, const NormWeights& norm, float eps,
                            const float* x, size_t rows, size_t dim, float* scratch);

}  // namespace edgemt::transformer
