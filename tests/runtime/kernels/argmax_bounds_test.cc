// Pass 1 of the arg-max shortcut against a naive loop of its equation: each
// A + B and the maximum of A - B, banned (NaN) ids never raising it,
// infinities reported; and the dispatched pass giving the portable one's
// bits (layers/argmax_shortcut_test.cc checks what the bound proves).
#include "kernels/argmax_bounds.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;

struct Row {
  std::vector<float> max_error, l1, abs_bias, approx;
};

Row random_row(Random& rng, size_t n) {
  Row r;
  r.max_error = rng.normal_vector(n, 0.0f, 0.01f);
  r.l1 = rng.normal_vector(n, 0.0f, 5.0f);
  r.abs_bias = rng.normal_vector(n, 0.0f, 0.5f);
  for (std::vector<float>* v : {&r.max_error, &r.l1, &r.abs_bias}) {
    for (float& x : *v) x = std::fabs(x);
  }
  r.approx = rng.normal_vector(n, 0.0f, 4.0f);
  return r;
}

const ArgmaxBoundFactors kFactors = [] {
  ArgmaxBoundFactors f;
  f.error = 30.0f;
  f.l1 = 0.003f;
  f.bias = 6e-8f;
  f.approx = 2.4e-7f;
  return f;
}();
constexpr float kWidening = 1.0f + 1.0f / 1024.0f;

TEST_CASE("kernels/argmax_bounds: A + B and max(A - B) as the equation, banned ids aside") {
  Random rng(51);
  for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, size_t{5}, size_t{17}, size_t{100}}) {
    CAPTURE(n);
    Row r = random_row(rng, n);
    if (n > 2) r.approx[2] = NAN;  // banned
    std::vector<float> got = r.approx;
    bool infinite = true;
    const float threshold = argmax_upper_bounds_portable(r.max_error.data(), r.l1.data(),
                                                         r.abs_bias.data(), kFactors, kWidening, n,
                                                         got.data(), &infinite);
    CHECK_FALSE(infinite);
    float want_threshold = -INFINITY;
    for (size_t i = 0; i < n; ++i) {
      CAPTURE(i);
      const float a = r.approx[i];
      const float b = (r.max_error[i] * kFactors.error + r.l1[i] * kFactors.l1 +
                       r.abs_bias[i] * kFactors.bias + std::fabs(a) * kFactors.approx) *
                      kWidening;
      if (std::isnan(a)) {
        CHECK(std::isnan(got[i]));
        continue;
      }
      CHECK(got[i] == a + b);
      if (a - b > want_threshold) want_threshold = a - b;
    }
    CHECK(threshold == want_threshold);
  }
}

TEST_CASE("kernels/argmax_bounds: an infinite A or B is reported, in the lanes and the tail") {
  Random rng(52);
  for (size_t at : {size_t{1}, size_t{6}, size_t{18}}) {
    for (bool in_bound : {false, true}) {
      CAPTURE(at);
      CAPTURE(in_bound);
      // An infinite B (through ‖w‖₁) or an infinite A at id `at`.
      const auto row_with_infinity = [&] {
        Row r = random_row(rng, 19);
        if (in_bound) {
          r.l1[at] = INFINITY;
        } else {
          r.approx[at] = -INFINITY;
        }
        return r;
      };
      Row r = row_with_infinity();
      bool infinite = false;
      (void)argmax_upper_bounds_portable(r.max_error.data(), r.l1.data(), r.abs_bias.data(),
                                         kFactors, kWidening, 19, r.approx.data(), &infinite);
      CHECK(infinite);
      Row again = row_with_infinity();
      infinite = false;
      (void)argmax_upper_bounds(again.max_error.data(), again.l1.data(), again.abs_bias.data(),
                                kFactors, kWidening, 19, again.approx.data(), &infinite);
      CHECK(infinite);
    }
  }
}

TEST_CASE("kernels/argmax_bounds: the dispatched pass gives the portable one's bits") {
  Random rng(53);
  for (size_t n = 0; n <= 70; ++n) {
    CAPTURE(n);
    Row r = random_row(rng, n);
    for (size_t i = 0; i < n; i += 7) r.approx[i] = NAN;
    if (n > 40) r.approx[40] = -0.0f;
    std::vector<float> want = r.approx, got = r.approx;
    bool want_infinite = true, got_infinite = true;
    const float want_threshold =
        argmax_upper_bounds_portable(r.max_error.data(), r.l1.data(), r.abs_bias.data(), kFactors,
                                     kWidening, n, want.data(), &want_infinite);
    const float got_threshold = argmax_upper_bounds(r.max_error.data(), r.l1.data(),
                                                    r.abs_bias.data(), kFactors, kWidening, n,
                                                    got.data(), &got_infinite);
    CHECK(testing::same_bits_any_nan(got.data(), want.data(), n));
    CHECK(got_threshold == want_threshold);  // a value: +0 and -0 are equal
    CHECK(got_infinite == want_infinite);
  }
}

}  // namespace
}  // namespace edgemt::kernels
