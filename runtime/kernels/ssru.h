// Marian's SSRU cell (src/rnn/cells.h, SSRU; HighwayForward's order) for one
// row of a decoder step, element-wise over d units:
//   f    = sigmoid(gates[d + i])                (math::sigmoid_f32)
//   c[i] = f·c[i] + (1 - f)·gates[i]            (c = 0 before the first step)
//   h[i] = c[i] > 0 ? c[i] : 0                  (ReLU: NaN -> 0, -0 -> +0)
// gates [2d]: x·W (the candidate) then x·Wf + bf (the forget gate's input);
// cell [d] in/out (not read when `first`); h [d] out. Every variant gives
// the portable loop's bits; ssru_cell() runs the fastest this CPU has.
#pragma once

#include <cstddef>

namespace edgemt::kernels {

void ssru_cell(const float* gates, size_t d, bool first, float* cell, float* h);
// Units [begin, d) only (the vector variants' tails).
void ssru_cell_portable(const float* gates, size_t d, bool first, float* cell, float* h,
                        size_t begin = 0);
#if defined(__x86_64__)
void ssru_cell_avx2(const float* gates, size_t d, bool first, float* cell, float* h);
#endif

}  // namespace edgemt::kernels
