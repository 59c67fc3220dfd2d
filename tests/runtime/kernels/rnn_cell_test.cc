// lstm_cell / gru_cell (kernels/rnn_cell.h) against a naive reference in
// double with PyTorch's equations (aten/src/ATen/native/RNN.cpp).
#include "kernels/rnn_cell.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

namespace edgemt::kernels {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Widened copies, so the reference computes in double throughout.
std::vector<double> wide(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

std::vector<float> random_vector(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(rng);
  return v;
}

TEST_CASE("kernels/rnn_cell: lstm_cell matches PyTorch's equations in double") {
  for (size_t units : {1u, 7u, 64u}) {
    const std::vector<float> gx = random_vector(4 * units, 1, 4.0f), gh = random_vector(4 * units, 2, 4.0f);
    std::vector<float> c = random_vector(units, 3, 2.0f), h(units, -7.0f);
    const std::vector<float> c0 = c;
    lstm_cell(gx.data(), gh.data(), units, c.data(), h.data());
    const std::vector<double> x = wide(gx), y = wide(gh), c_in = wide(c0);
    for (size_t k = 0; k < units; ++k) {
      auto gate = [&](size_t q) { return y[q * units + k] + x[q * units + k]; };
      const double i = sigmoid(gate(0)), f = sigmoid(gate(1)), g = std::tanh(gate(2)), o = sigmoid(gate(3));
      const double c_ref = f * c_in[k] + i * g;
      const double h_ref = o * std::tanh(c_ref);
      CHECK(c[k] == doctest::Approx(c_ref).epsilon(1e-6));
      CHECK(h[k] == doctest::Approx(h_ref).epsilon(1e-6));
    }
  }
}

TEST_CASE("kernels/rnn_cell: gru_cell matches PyTorch's equations in double") {
  for (size_t units : {1u, 5u, 64u}) {
    const std::vector<float> gx = random_vector(3 * units, 4, 4.0f), gh = random_vector(3 * units, 5, 4.0f);
    std::vector<float> h = random_vector(units, 6, 1.0f);
    const std::vector<float> h0 = h;
    gru_cell(gx.data(), gh.data(), units, h.data());
    const std::vector<double> x = wide(gx), y = wide(gh), h_in = wide(h0);
    for (size_t k = 0; k < units; ++k) {
      const double r = sigmoid(y[k] + x[k]);
      const double z = sigmoid(y[units + k] + x[units + k]);
      const double n = std::tanh(x[2 * units + k] + r * y[2 * units + k]);
      const double h_ref = (1.0 - z) * n + z * h_in[k];
      CHECK(h[k] == doctest::Approx(h_ref).epsilon(1e-6).scale(1.0));
    }
  }
}

TEST_CASE("kernels/rnn_cell: saturated gates keep or replace the state exactly") {
  // LSTM with f = 1, i = 0 (gates at +-100): c unchanged; GRU with z = 1: h unchanged.
  const size_t u = 3;
  std::vector<float> gx(4 * u, 0.0f), gh(4 * u, 0.0f);
  for (size_t k = 0; k < u; ++k) {
    gx[k] = -100.0f;     // i -> 0
    gx[u + k] = 100.0f;  // f -> 1
  }
  std::vector<float> c = {0.5f, -0.25f, 2.0f}, h(u);
  lstm_cell(gx.data(), gh.data(), u, c.data(), h.data());
  CHECK(c == std::vector<float>{0.5f, -0.25f, 2.0f});
  std::vector<float> gru_x(3 * u, 0.0f), gru_h(3 * u, 0.0f);
  for (size_t k = 0; k < u; ++k) gru_x[u + k] = 100.0f;  // z -> 1
  std::vector<float> state = {0.5f, -0.25f, 0.75f};
  gru_cell(gru_x.data(), gru_h.data(), u, state.data());
  CHECK(state == std::vector<float>{0.5f, -0.25f, 0.75f});
}

}  // namespace
}  // namespace edgemt::kernels
