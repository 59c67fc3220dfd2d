// The AVX2 SSRU cell gives the portable loop's bits (the portable one is
// checked against double precision in ../ssru_test.cc): a dense sweep of
// forget inputs (where e^-x over- and underflows too), candidates and
// states with signed zeros, infinities and NaN, the first step and later
// ones, and every length around the eight lanes (the scalar tail, and
// nothing written past d); skipped on CPUs without AVX2. A NaN equals any
// NaN: where a NaN state meets a NaN the gate made, the scalar loop's
// payload is the compiler's choice (clang 14 and GCC 12 differ).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/ssru.h"
#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;
using testing::same_bits_any_nan;

void check_same(const std::vector<float>& gates, const std::vector<float>& state, size_t d) {
  for (bool first : {true, false}) {
    CAPTURE(first);
    std::vector<float> want_cell = state, got_cell = state;
    std::vector<float> want_h(d + 3, 7.0f), got_h(d + 3, 7.0f);
    want_cell.resize(d + 3, 9.0f);
    got_cell.resize(d + 3, 9.0f);
    ssru_cell_portable(gates.data(), d, first, want_cell.data(), want_h.data());
    ssru_cell_avx2(gates.data(), d, first, got_cell.data(), got_h.data());
    CHECK(same_bits_any_nan(got_cell.data(), want_cell.data(), d + 3));  // past d: untouched
    CHECK(same_bits_any_nan(got_h.data(), want_h.data(), d + 3));
  }
}

TEST_CASE("kernels/ssru_avx2: the portable loop's bits" * doctest::skip(!cpu_features().avx2)) {
  std::vector<float> forget;
  for (int i = -240000; i <= 240000; ++i) forget.push_back(static_cast<float>(i) * 5e-4f);  // [-120, 120]
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-40f, 86.9f, -86.9f, 88.5f, -88.5f, 103.9f, -104.1f,
                  1e20f, -1e20f, INFINITY, -INFINITY, NAN}) {
    forget.push_back(v);
  }
  const size_t d = forget.size();
  Random rng(43);
  std::vector<float> gates = rng.normal_vector(d, 0.0f, 3.0f);  // candidates
  std::vector<float> state = rng.normal_vector(d, 0.0f, 3.0f);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f};
  for (size_t i = 0; i < 7; ++i) {
    for (size_t j = 0; j < 7; ++j) {  // every pair of special candidate and state
      gates[1000 + 7 * i + j] = specials[i];
      state[1000 + 7 * i + j] = specials[j];
    }
  }
  gates.insert(gates.end(), forget.begin(), forget.end());
  check_same(gates, state, d);
}

TEST_CASE("kernels/ssru_avx2: every length writes its d units and no more" * doctest::skip(!cpu_features().avx2)) {
  Random rng(44);
  for (size_t d = 0; d <= 33; ++d) {
    CAPTURE(d);
    check_same(rng.normal_vector(2 * d, 0.0f, 4.0f), rng.normal_vector(d, 0.0f, 2.0f), d);
  }
}

}  // namespace
}  // namespace edgemt::kernels
