// Token embedding lookup for the first layer:
//
//   out[t, :] = table[ids[t], :] * scale + positions[first_position + t * position_step, :]
//
// table: [vocab, dim] f32; positions: [max_positions, dim] f32; out: [count, dim].
// position_step is 1 for a whole sequence (encoder) and 0 for one decoder step
// over many hypotheses that all sit at the same position.
// The caller guarantees ids < vocab and that every position used is
// < max_positions (checked once, at the API boundary).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt::kernels {

void embed_tokens(const float* table, size_t dim, const int32_t* ids, size_t count,
                  float scale, const float* positions, size_t first_position,
                  size_t position_step, float* out);

}  // namespace edgemt::kernels
