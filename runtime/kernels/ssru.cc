#include "kernels/ssru.h"

#include "core/cpu_features.h"
#include "kernels/portable_math.h"

namespace edgemt::kernels {

namespace {

// The cell over units [begin, d). kFirst: the previous state is 0 (cell is
// not read). Written so that GCC and clang vectorize it (NEON, WebAssembly
// SIMD): a run-time `first ? 0 : cell[i]` is a conditional load they do not
// if-convert, and a float `?:` stays a branch (math::select).
template <bool kFirst>
void cell_units(const float* gates, size_t d, float* cell, float* h, size_t begin) {
  for (size_t i = begin; i < d; ++i) {
    const float f = math::sigmoid_f32(gates[d + i]);
    const float previous = kFirst ? 0.0f : cell[i];
    const float c = f * previous + (1.0f - f) * gates[i];
    cell[i] = c;
    h[i] = math::select(c > 0.0f, c, 0.0f);
  }
}

}  // namespace

void ssru_cell_portable(const float* gates, size_t d, bool first, float* cell, float* h,
                        size_t begin) {
  if (first) {
    cell_units<true>(gates, d, cell, h, begin);
  } else {
    cell_units<false>(gates, d, cell, h, begin);
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
