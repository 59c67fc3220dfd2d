#include "kernels/rnn_attention.h"

#include "kernels/portable_math.h"

namespace edgemt::kernels {

namespace {

// Sums of 8 interleaved partial sums (lane j takes k ≡ j mod 8), combined
// pairwise in a fixed order: independent chains the compiler keeps in one
// vector register, and the same bits on every CPU (no reassociation is left
// to the compiler).
constexpr size_t kLanes = 8;

float combine(const float* lane) {
  return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

float dot(const float* a, const float* b, size_t n) {
  float lane[kLanes] = {};
  size_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    for (size_t j = 0; j < kLanes; ++j) lane[j] += a[k + j] * b[k + j];
  }
  for (size_t j = 0; k + j < n; ++j) lane[j] += a[k + j] * b[k + j];
  return combine(lane);
}

// Σ_k v[k] · tanh(q[k] + key[k]), lanes as dot().
float additive(const float* v, const float* q, const float* key, size_t n) {
  float lane[kLanes] = {};
  size_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    for (size_t j = 0; j < kLanes; ++j) lane[j] += v[k + j] * math::tanh_f32(q[k + j] + key[k + j]);
  }
  for (size_t j = 0; k + j < n; ++j) lane[j] += v[k + j] * math::tanh_f32(q[k + j] + key[k + j]);
  return combine(lane);
}

}  // namespace

void rnn_attend(RnnScoreForm form, const float* query, const float* keys, const float* values,
                const float* v, size_t n, size_t hidden, float* weights, float* context) {
  for (size_t i = 0; i < n; ++i) {
    const float* key = keys + i * hidden;
    weights[i] = form == RnnScoreForm::kDot ? dot(key, query, hidden) : additive(v, query, key, hidden);
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
