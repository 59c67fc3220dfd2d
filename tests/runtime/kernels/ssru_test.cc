// The SSRU cell against a double-precision reference of Marian's equations
// (f = sigmoid(forget input), c = f·c + (1 - f)·candidate, h = relu(c)):
// the first step (no state read), later steps, a state carried over ten
// steps, and the dispatched variant giving the portable loop's bits.
#include "kernels/ssru.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;

// One step in double: the state's and the output's reference values.
void reference_step(const std::vector<float>& gates, size_t d, bool first,
                    std::vector<double>* cell, std::vector<double>* h) {
  for (size_t i = 0; i < d; ++i) {
    const double f = 1.0 / (1.0 + std::exp(-static_cast<double>(gates[d + i])));
    const double previous = first ? 0.0 : (*cell)[i];
    (*cell)[i] = f * previous + (1.0 - f) * static_cast<double>(gates[i]);
    (*h)[i] = (*cell)[i] > 0.0 ? (*cell)[i] : 0.0;
  }
}

TEST_CASE("kernels/ssru: Marian's cell over ten steps, against double precision") {
  Random rng(41);
  for (size_t d : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{64}, size_t{257}}) {
    CAPTURE(d);
    std::vector<float> cell(d, 123.0f), h(d, -1.0f);  // garbage the first step must not read
    std::vector<double> want_cell(d, 0.0), want_h(d, 0.0);
    for (int step = 0; step < 10; ++step) {
      CAPTURE(step);
      const std::vector<float> gates = rng.normal_vector(2 * d, 0.0f, 3.0f);
      ssru_cell_portable(gates.data(), d, step == 0, cell.data(), h.data());
      reference_step(gates, d, step == 0, &want_cell, &want_h);
      for (size_t i = 0; i < d; ++i) {
        // A few float roundings on values of the gates' size (|c| <= max
        // |candidate| seen, a convex mix): 1e-5 relative to that scale.
        CHECK(std::fabs(static_cast<double>(cell[i]) - want_cell[i]) <= 1e-5 * (1.0 + std::fabs(want_cell[i])));
        CHECK(std::fabs(static_cast<double>(h[i]) - want_h[i]) <= 1e-5 * (1.0 + std::fabs(want_h[i])));
        CHECK(h[i] >= 0.0f);
      }
      // The state is exactly what the step read back next time.
      for (size_t i = 0; i < d; ++i) want_cell[i] = static_cast<double>(cell[i]);
    }
  }
}

TEST_CASE("kernels/ssru: a forget gate of one keeps the state, of zero takes the candidate") {
  const size_t d = 4;
  // gates: candidates [1, -2, 3, -4], forget inputs [+100, +100, -100, -100]
  // (sigmoid 1 and 0 in float).
  const std::vector<float> gates = {1.0f, -2.0f, 3.0f, -4.0f, 100.0f, 100.0f, -100.0f, -100.0f};
  std::vector<float> cell = {5.0f, -6.0f, 7.0f, -8.0f}, h(d);
  ssru_cell_portable(gates.data(), d, false, cell.data(), h.data());
  CHECK(cell == std::vector<float>{5.0f, -6.0f, 3.0f, -4.0f});
  CHECK(h == std::vector<float>{5.0f, 0.0f, 3.0f, 0.0f});
  ssru_cell_portable(gates.data(), d, true, cell.data(), h.data());  // first: state 0
  CHECK(cell == std::vector<float>{0.0f, 0.0f, 3.0f, -4.0f});
}

TEST_CASE("kernels/ssru: the dispatched cell gives the portable loop's bits") {
  Random rng(42);
  for (size_t d : {size_t{3}, size_t{16}, size_t{100}, size_t{256}}) {
    CAPTURE(d);
    const std::vector<float> gates = rng.normal_vector(2 * d, 0.0f, 4.0f);
    const std::vector<float> state = rng.normal_vector(d, 0.0f, 2.0f);
    for (bool first : {true, false}) {
      std::vector<float> want_cell = state, got_cell = state, want_h(d), got_h(d);
      ssru_cell_portable(gates.data(), d, first, want_cell.data(), want_h.data());
      ssru_cell(gates.data(), d, first, got_cell.data(), got_h.data());
      CHECK(testing::same_bits(got_cell.data(), want_cell.data(), d));
      CHECK(testing::same_bits(got_h.data(), want_h.data(), d));
    }
  }
}

}  // namespace
}  // namespace edgemt::kernels
