// The AVX2 SiLU gives the portable loop's bits (the portable one is checked
// against a double-precision reference in ../activation_test.cc): a dense
// sweep, the tails where e^-x over- and underflows, signed zeros, infinities
// and NaN, and every length around the eight lanes (the masked tail must
// leave the elements past n alone); skipped on CPUs without AVX2.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/activation.h"
#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;
using testing::same_bits;

TEST_CASE("kernels/swish_avx2: the portable loop's bits" * doctest::skip(!cpu_features().avx2)) {
  std::vector<float> x;
  for (int i = -240000; i <= 240000; ++i) x.push_back(static_cast<float>(i) * 5e-4f);  // [-120, 120]
  Random rng(29);
  for (int i = 0; i < 10000; ++i) x.push_back(rng.normal(0.0f, 4.0f));
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-40f, -1e-40f, 86.9f, -86.9f, 87.5f, -87.5f,
                  88.5f, -88.5f, 89.5f, -89.5f, 103.9f, -104.1f, 1e20f, -1e20f, INFINITY, -INFINITY, NAN}) {
    x.push_back(v);
  }
  std::vector<float> want = x, got = x;
  swish_portable(want.data(), want.size());
  swish_avx2(got.data(), got.size());
  CHECK(same_bits(got.data(), want.data(), got.size()));
}

TEST_CASE("kernels/swish_avx2: every length writes its n elements and no more" * doctest::skip(!cpu_features().avx2)) {
  Random rng(31);
  const std::vector<float> x = rng.normal_vector(40, 0.0f, 3.0f);
  for (size_t n = 0; n <= 33; ++n) {
    CAPTURE(n);
    std::vector<float> want = x, got = x;
    swish_portable(want.data(), n);
    swish_avx2(got.data(), n);
    CHECK(same_bits(got.data(), want.data(), x.size()));  // x[n..) untouched in both
  }
}

}  // namespace
}  // namespace edgemt::kernels
