#include "kernels/rnn_attention.h"

#include "kernels/portable_math.h"

namespace edgemt::kernels {

void rnn_attend(RnnScoreForm form, const float* query, const float* keys, const float* values,
                const float* v, size_t n, size_t hidden, float* weights, float* context) {
  for (size_t i = 0; i < n; ++i) {
    const float* key = keys + i * hidden;
    float e = 0.0f;
    if (form == RnnScoreForm::kDot) {
      for (size_t k = 0; k < hidden; ++k) e += key[k] * query[k];
    } else {
      for (size_t k = 0; k < hidden; ++k) e += v[k] * math::tanh_f32(query[k] + key[k]);
    }
    weights[i] = e;
  }
  float max = weights[0];
  for (size_t i = 1; i < n; ++i) max = weights[i] > max ? weights[i] : max;
  float sum = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    weights[i] = math::exp_f32(weights[i] - max);
    sum += weights[i];
  }
  for (size_t i = 0; i < n; ++i) weights[i] = weights[i] / sum;
  for (size_t k = 0; k < hidden; ++k) context[k] = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float a = weights[i];
    const float* value = values + i * hidden;
    for (size_t k = 0; k < hidden; ++k) context[k] += a * value[k];
  }
}

}  // namespace edgemt::kernels
