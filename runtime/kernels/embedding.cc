#include "kernels/embedding.h"

namespace edgemt::kernels {

void embed_tokens(const float* table, size_t dim, const int32_t* ids, size_t count, float scale,
                  const float* positions, size_t first_position, size_t position_step,
                  float* out) {
  for (size_t t = 0; t < count; ++t) {
    // ids are validated at the API boundary (0 <= id < vocab).
    const float* __restrict row = table + static_cast<size_t>(ids[t]) * dim;
    const float* __restrict pos = positions + (first_position + t * position_step) * dim;
    float* __restrict o = out + t * dim;
    // [dim]: scale first, then add the position (fairseq's order).
    for (size_t d = 0; d < dim; ++d) o[d] = row[d] * scale + pos[d];
  }
}

}  // namespace edgemt::kernels
