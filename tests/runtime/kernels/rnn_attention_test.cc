// rnn_attend (kernels/rnn_attention.h) against a naive reference in double.
#include "kernels/rnn_attention.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

namespace edgemt::kernels {
namespace {

std::vector<float> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(rng);
  return v;
}

void reference(RnnScoreForm form, const std::vector<float>& q, const std::vector<float>& keys,
               const std::vector<float>& values, const std::vector<float>& v, size_t n, size_t h,
               std::vector<double>* weights, std::vector<double>* context) {
  std::vector<double> e(n > 0 ? n : 1, 0.0);
  for (size_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (size_t k = 0; k < h; ++k) {
      const double key = static_cast<double>(keys[i * h + k]), query = static_cast<double>(q[k]),
                   weight = static_cast<double>(v[k]);
      sum += form == RnnScoreForm::kDot ? key * query : weight * std::tanh(query + key);
    }
    e[i] = sum;
  }
  double max = e[0], total = 0.0;
  for (double x : e) max = x > max ? x : max;
  weights->assign(n, 0.0);
  for (size_t i = 0; i < n; ++i) total += (*weights)[i] = std::exp(e[i] - max);
  for (double& a : *weights) a /= total;
  context->assign(h, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < h; ++k) (*context)[k] += (*weights)[i] * static_cast<double>(values[i * h + k]);
  }
}

TEST_CASE("kernels/rnn_attention: dot and additive scores, softmax and context match a double reference") {
  for (RnnScoreForm form : {RnnScoreForm::kDot, RnnScoreForm::kAdditive}) {
    for (size_t n : {1u, 2u, 13u, 60u}) {
      for (size_t h : {1u, 8u, 64u}) {
        CAPTURE(n);
        CAPTURE(h);
        const std::vector<float> q = random_vector(h, 1), keys = random_vector(n * h, 2),
                                 values = random_vector(n * h, 3), v = random_vector(h, 4);
        std::vector<float> weights(n, -1.0f), context(h, -1.0f);
        rnn_attend(form, q.data(), keys.data(), values.data(), v.data(), n, h, weights.data(), context.data());
        std::vector<double> ref_weights, ref_context;
        reference(form, q, keys, values, v, n, h, &ref_weights, &ref_context);
        double sum = 0.0;
        for (size_t i = 0; i < n; ++i) {
          CHECK(weights[i] == doctest::Approx(ref_weights[i]).epsilon(1e-5).scale(1.0));
          sum += static_cast<double>(weights[i]);
        }
        CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
        for (size_t k = 0; k < h; ++k) CHECK(context[k] == doctest::Approx(ref_context[k]).epsilon(1e-5).scale(1.0));
      }
    }
  }
}

TEST_CASE("kernels/rnn_attention: one position gets weight 1 and its value as context") {
  const std::vector<float> q = {1.0f, 2.0f}, keys = {3.0f, -1.0f}, values = {0.25f, -0.5f}, v = {1.0f, 1.0f};
  float weight = 0.0f;
  float context[2] = {};
  rnn_attend(RnnScoreForm::kAdditive, q.data(), keys.data(), values.data(), v.data(), 1, 2, &weight, context);
  CHECK(weight == 1.0f);
  CHECK(context[0] == 0.25f);
  CHECK(context[1] == -0.5f);
}

}  // namespace
}  // namespace edgemt::kernels
