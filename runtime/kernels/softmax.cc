#include "kernels/softmax.h"

#include "kernels/portable_math.h"
#include "kernels/reduce.h"
#include "kernels/vocab_row.h"

namespace edgemt::kernels {

void softmax(float* x, size_t n) {
  const float m = detail::max(x, n);
  if (m == -__builtin_huge_valf()) {
    // Empty row or every entry masked: all zeros, not 0/0 = NaN.
    for (size_t i = 0; i < n; ++i) x[i] = 0.0f;
    return;
  }
  // e^(x - m) <= 1, -inf entries become exactly 0. Stored, then summed with
  // the fixed-lane reduction (a separate pass keeps the exp loop vectorizable).
  for (size_t i = 0; i < n; ++i) x[i] = math::exp_f32(x[i] - m);
  const float total = detail::sum(x, n);  // >= 1: the max entry contributes e^0
  const float inv = 1.0f / total;
  for (size_t i = 0; i < n; ++i) x[i] *= inv;
}

namespace {

// log(sum(e^(x - m))) for the row's max m (finite), without touching x:
// blocks of lanes as detail::sum, so the exp loop vectorizes.
float log_sum_exp_shifted(const float* x, size_t n, float m) {
  float total = 0.0f;
  for (size_t b = 0; b < n; b += detail::kBlock) {
    const size_t len = n - b < detail::kBlock ? n - b : detail::kBlock;
    const float* __restrict xb = x + b;
    float acc[detail::kLanes] = {};
    size_t i = 0;
    for (; i + detail::kLanes <= len; i += detail::kLanes) {
      for (size_t l = 0; l < detail::kLanes; ++l) acc[l] += math::exp_f32(xb[i + l] - m);
    }
    for (size_t l = 0; i + l < len; ++l) acc[l] += math::exp_f32(xb[i + l] - m);
    total += detail::combine_lanes(acc);
  }
  return static_cast<float>(math::log_f64(static_cast<double>(total)));
}

}  // namespace

RowNormalizer normalize_row(const float* x, size_t n) {
  RowNormalizer norm;
  norm.max = detail::max(x, n);
  // An all -inf row: log_softmax leaves it all -inf, log_sum_exp is -inf.
  if (norm.max == -__builtin_huge_valf()) return norm;
  norm.log_total = log_sum_exp_shifted(x, n, norm.max);
  return norm;
}

float log_softmax(float* x, size_t n) {
  const RowNormalizer norm = normalize_row(x, n);
  if (norm.max == -__builtin_huge_valf()) return norm.max;
  for (size_t j = 0; j < n; ++j) x[j] = (x[j] - norm.max) - norm.log_total;
  return norm.max + norm.log_total;
}

float log_sum_exp(const float* x, size_t n) {
  const RowNormalizer norm = normalize_row(x, n);
  return norm.max + norm.log_total;
}

}  // namespace edgemt::kernels
