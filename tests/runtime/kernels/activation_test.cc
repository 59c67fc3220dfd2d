// relu / gelu / swish against double-precision references.
#include "kernels/activation.h"

#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <vector>

#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;

double reference_gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double reference_swish(double x) { return x / (1.0 + std::exp(-x)); }

// Inputs: a dense sweep over the interesting range, random values and the
// tails where the functions underflow.
std::vector<float> sweep_inputs() {
  std::vector<float> x;
  for (int i = -400000; i <= 400000; ++i) x.push_back(static_cast<float>(i) * 5e-5f);  // [-20, 20]
  Random rng(11);
  for (int i = 0; i < 10000; ++i) x.push_back(rng.normal(0.0f, 3.0f));
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-40f, 30.0f, -30.0f, 87.0f, -87.0f, 100.0f,
                  -100.0f, 1e20f, -1e20f}) {
    x.push_back(v);
  }
  return x;
}

// Largest relative error, ignoring outputs below `floor` (where only the
// absolute error matters and is checked separately).
template <typename Ref>
double max_relative_error(const std::vector<float>& in, const std::vector<float>& out, Ref ref,
                          double floor, double* worst_x) {
  double worst = 0.0;
  for (size_t i = 0; i < in.size(); ++i) {
    const double r = ref(static_cast<double>(in[i]));
    const double abs_err = std::fabs(static_cast<double>(out[i]) - r);
    const double e = std::fabs(r) > floor ? abs_err / std::fabs(r) : abs_err / floor;
    if (!(e <= worst)) {
      worst = e;
      *worst_x = static_cast<double>(in[i]);
    }
  }
  return worst;
}

TEST_CASE("kernels/relu: zero for negatives - identity otherwise - NaN stays NaN") {
  std::vector<float> x = {-3.0f, -0.5f, 0.0f, 0.5f, 3.0f, -INFINITY, INFINITY, NAN};
  relu(x.data(), x.size());
  CHECK(x[0] == 0.0f);
  CHECK(x[1] == 0.0f);
  CHECK(x[2] == 0.0f);
  CHECK(x[3] == 0.5f);
  CHECK(x[4] == 3.0f);
  CHECK(x[5] == 0.0f);
  CHECK(x[6] == INFINITY);
  CHECK(std::isnan(x[7]));
}

TEST_CASE("kernels/gelu: exact (erf) GELU within 1e-6 relative") {
  const auto in = sweep_inputs();
  auto out = in;
  gelu(out.data(), out.size());
  double worst_x = 0.0;
  // Below 1e-30 in magnitude only the absolute error is checked (x < -11).
  const double err = max_relative_error(in, out, reference_gelu, 1e-30, &worst_x);
  CAPTURE(worst_x);
  CHECK(err <= 1e-6);
  // The tanh approximation would be off by up to ~3e-4 absolute near |x| = 2:
  // check a point where the two differ.
  float v = 2.0f;
  gelu(&v, 1);
  CHECK(std::fabs(static_cast<double>(v) - reference_gelu(2.0)) < 1e-6);
}

TEST_CASE("kernels/gelu: special values") {
  std::vector<float> x = {0.0f, INFINITY, NAN, -200.0f};
  gelu(x.data(), x.size());
  CHECK(x[0] == 0.0f);
  CHECK(x[1] == INFINITY);
  CHECK(std::isnan(x[2]));
  CHECK(x[3] == 0.0f);  // -0: underflows
}

TEST_CASE("kernels/swish: x * sigmoid(x) within 1e-6 relative") {
  const auto in = sweep_inputs();
  auto out = in;
  swish(out.data(), out.size());
  double worst_x = 0.0;
  const double err = max_relative_error(in, out, reference_swish, 1e-30, &worst_x);
  CAPTURE(worst_x);
  CHECK(err <= 1e-6);
  std::vector<float> s = {INFINITY, NAN, -200.0f};
  swish(s.data(), s.size());
  CHECK(s[0] == INFINITY);
  CHECK(std::isnan(s[1]));
  CHECK(s[2] == 0.0f);
}

TEST_CASE("kernels/activation: vector body and scalar tail give identical bits") {
  // Every element must come out the same whatever its position in the array
  // (vectorized main loop vs. scalar remainder): the same input gives the
  // same bits on every ISA and vector width.
  Random rng(12);
  for (Activation act : {Activation::kRelu, Activation::kGelu, Activation::kSwish}) {
    for (size_t n : {size_t{1}, size_t{3}, size_t{17}, size_t{255}, size_t{256}}) {
      auto x = rng.normal_vector(n, 0.0f, 4.0f);
      auto whole = x;
      apply_activation(act, whole.data(), n);
      bool same = true;
      for (size_t i = 0; i < n; ++i) {
        float one = x[i];
        apply_activation(act, &one, 1);
        same = same && testing::bits_of(one) == testing::bits_of(whole[i]);
      }
      const int activation = static_cast<int>(act);
      CAPTURE(activation);
      CAPTURE(n);
      CHECK(same);
    }
  }
}

TEST_CASE("kernels/apply_activation: dispatches to the named function") {
  Random rng(13);
  const auto x = rng.normal_vector(33, 0.0f, 2.0f);
  auto a = x, b = x, c = x, d = x, e = x, f = x;
  apply_activation(Activation::kRelu, a.data(), a.size());
  relu(b.data(), b.size());
  apply_activation(Activation::kGelu, c.data(), c.size());
  gelu(d.data(), d.size());
  apply_activation(Activation::kSwish, e.data(), e.size());
  swish(f.data(), f.size());
  CHECK(testing::same_bits(a.data(), b.data(), a.size()));
  CHECK(testing::same_bits(c.data(), d.data(), c.size()));
  CHECK(testing::same_bits(e.data(), f.data(), e.size()));
  CHECK_FALSE(testing::same_bits(a.data(), c.data(), a.size()));
}

}  // namespace
}  // namespace edgemt::kernels
