#include "kernels/rnn_cell.h"

#include "kernels/portable_math.h"

namespace edgemt::kernels {

void lstm_cell(const float* gx, const float* gh, size_t units, float* c, float* h) {
  const size_t u = units;
  for (size_t k = 0; k < u; ++k) {
    const float i = math::sigmoid_f32(gh[k] + gx[k]);
    const float f = math::sigmoid_f32(gh[u + k] + gx[u + k]);
    const float g = math::tanh_f32(gh[2 * u + k] + gx[2 * u + k]);
    const float o = math::sigmoid_f32(gh[3 * u + k] + gx[3 * u + k]);
    const float forget = f * c[k];
    const float input = i * g;
    c[k] = forget + input;
    h[k] = o * math::tanh_f32(c[k]);
  }
}

void gru_cell(const float* gx, const float* gh, size_t units, float* h) {
  const size_t u = units;
  for (size_t k = 0; k < u; ++k) {
    const float r = math::sigmoid_f32(gh[k] + gx[k]);
    const float z = math::sigmoid_f32(gh[u + k] + gx[u + k]);
    const float reset = gh[2 * u + k] * r;
    const float n = math::tanh_f32(gx[2 * u + k] + reset);
    const float keep = (h[k] - n) * z;
    h[k] = keep + n;
  }
}

}  // namespace edgemt::kernels
