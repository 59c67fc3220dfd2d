#include "kernels/ssru.h"

#include "core/cpu_features.h"
#include "kernels/portable_math.h"

namespace edgemt::kernels {

void ssru_cell_portable(const float* gates, size_t d, bool first, float* cell, float* h,
                        size_t begin) {
  for (size_t i = begin; i < d; ++i) {
    const float f = math::sigmoid_f32(gates[d + i]);
    const float previous = first ? 0.0f : cell[i];
    cell[i] = f * previous + (1.0f - f) * gates[i];
    h[i] = cell[i] > 0.0f ? cell[i] : 0.0f;
  }
}

void ssru_cell(const float* gates, size_t d, bool first, float* cell, float* h) {
#if defined(__x86_64__)
  if (cpu_features().avx2) {
    ssru_cell_avx2(gates, d, first, cell, h);
    return;
  }
#endif
  ssru_cell_portable(gates, d, first, cell, h);
}

}  // namespace edgemt::kernels
