// softmax / log_softmax against double-precision references.
#include "kernels/softmax.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <initializer_list>
#include <vector>

#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;

// Reference in double; masked (-inf) entries get probability 0.
std::vector<double> reference_softmax(const std::vector<float>& x) {
  double m = -HUGE_VAL;
  for (float v : x) m = static_cast<double>(v) > m ? static_cast<double>(v) : m;
  std::vector<double> p(x.size(), 0.0);
  if (m == -HUGE_VAL) return p;
  double sum = 0.0;
  for (size_t i = 0; i < x.size(); ++i) sum += std::exp(static_cast<double>(x[i]) - m);
  for (size_t i = 0; i < x.size(); ++i) p[i] = std::exp(static_cast<double>(x[i]) - m) / sum;
  return p;
}

std::vector<double> reference_log_softmax(const std::vector<float>& x) {
  double m = -HUGE_VAL;
  for (float v : x) m = static_cast<double>(v) > m ? static_cast<double>(v) : m;
  double sum = 0.0;
  for (float v : x) sum += std::exp(static_cast<double>(v) - m);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<double>(x[i]) - m - std::log(sum);
  return y;
}

// Error of p relative to the reference, in units of the bound
//   ref_i · (1e-6 + 1.2e-7·|x_i - max|)
// The second term is the float rounding of x_i - max (half an ulp of a
// number of that size), which every float softmax incurs and which e^(.)
// turns into a relative error. Below 1e-30 the error is taken as absolute.
double max_error(const std::vector<float>& x, const std::vector<float>& p,
                 const std::vector<double>& ref) {
  double m = -HUGE_VAL;
  for (float v : x) m = static_cast<double>(v) > m ? static_cast<double>(v) : m;
  double worst = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double err = std::fabs(static_cast<double>(p[i]) - ref[i]);
    const double gap = std::fabs(static_cast<double>(x[i]) - m);
    const double scale = (ref[i] > 1e-30 ? ref[i] : 1e-30) * (1.0 + 0.12 * (gap == HUGE_VAL ? 0.0 : gap));
    const double e = err / scale * 1e-6;  // in units of 1e-6 relative
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

constexpr size_t kSizes[] = {1, 2, 3, 7, 8, 9, 17, 255, 256, 1000, 32000};

TEST_CASE("kernels/softmax: matches double reference (probabilities within 1e-6 relative)") {
  Random rng(21);
  for (size_t n : kSizes) {
    for (float spread : {0.1f, 3.0f, 20.0f}) {
      for (float offset : {0.0f, 1000.0f, -1e4f}) {  // stability: max subtracted first
        std::vector<float> x(n);
        for (float& v : x) v = offset + rng.normal(0.0f, spread);
        auto p = x;
        softmax(p.data(), n);
        const auto ref = reference_softmax(x);
        double total = 0.0;
        for (float v : p) total += static_cast<double>(v);
        CAPTURE(n);
        CAPTURE(spread);
        CAPTURE(offset);
        CHECK(max_error(x, p, ref) <= 1e-6);
        CHECK(std::fabs(total - 1.0) <= 1e-6);
      }
    }
  }
}

TEST_CASE("kernels/softmax: -inf entries get exactly 0 - an all -inf row all zeros") {
  Random rng(22);
  for (size_t n : kSizes) {
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = (i % 3 == 1) ? -INFINITY : rng.normal(0.0f, 2.0f);
    auto p = x;
    softmax(p.data(), n);
    const auto ref = reference_softmax(x);
    bool masked_zero = true;
    for (size_t i = 0; i < n; ++i) masked_zero = masked_zero && (i % 3 != 1 || p[i] == 0.0f);
    CAPTURE(n);
    CHECK(masked_zero);
    CHECK(max_error(x, p, ref) <= 1e-6);

    std::vector<float> all(n, -INFINITY);
    softmax(all.data(), n);
    bool zeros = true;
    for (float v : all) zeros = zeros && testing::bits_of(v) == 0u;
    CHECK(zeros);
  }
  float none = 5.0f;
  softmax(&none, 0);  // n = 0: nothing written
  CHECK(none == 5.0f);
}

TEST_CASE("kernels/softmax: one entry is 1 - equal entries uniform - huge gaps underflow to 0") {
  float one = -123.0f;
  softmax(&one, 1);
  CHECK(one == 1.0f);

  std::vector<float> same(17, 0.25f);
  softmax(same.data(), same.size());
  for (float v : same) CHECK(std::fabs(static_cast<double>(v) - 1.0 / 17.0) <= 1e-7);

  std::vector<float> gap = {0.0f, -200.0f, -90.0f};
  softmax(gap.data(), gap.size());
  CHECK(gap[0] == 1.0f);
  CHECK(gap[1] == 0.0f);
  CHECK(std::fabs(static_cast<double>(gap[2]) - std::exp(-90.0)) <= 1e-6 * std::exp(-90.0));
}

TEST_CASE("kernels/softmax: NaN in the row poisons the row") {
  std::vector<float> x = {1.0f, NAN, 2.0f};
  softmax(x.data(), x.size());
  CHECK(std::isnan(x[0]));
  CHECK(std::isnan(x[2]));
}

TEST_CASE("kernels/log_softmax: matches double reference") {
  Random rng(23);
  for (size_t n : kSizes) {
    for (float spread : {0.1f, 3.0f, 20.0f}) {
      for (float offset : {0.0f, 500.0f}) {
        std::vector<float> x(n);
        for (float& v : x) v = offset + rng.normal(0.0f, spread);
        auto y = x;
        log_softmax(y.data(), n);
        const auto ref = reference_log_softmax(x);
        // Outputs are x - max - lse: error relative to max(1, |value|).
        double worst = 0.0;
        for (size_t i = 0; i < n; ++i) {
          const double a = std::fabs(ref[i]) > 1.0 ? std::fabs(ref[i]) : 1.0;
          const double e = std::fabs(static_cast<double>(y[i]) - ref[i]) / a;
          if (!(e <= worst)) worst = e;
        }
        CAPTURE(n);
        CAPTURE(spread);
        CAPTURE(offset);
        CHECK(worst <= 1e-6);
        // exp(log_softmax) agrees with softmax.
        auto p = x;
        softmax(p.data(), n);
        double diff = 0.0;
        for (size_t i = 0; i < n; ++i) {
          const double d =
              std::fabs(std::exp(static_cast<double>(y[i])) - static_cast<double>(p[i]));
          diff = d > diff ? d : diff;
        }
        CHECK(diff <= 1e-6);
      }
    }
  }
}

TEST_CASE("kernels/log_softmax: -inf stays -inf - all -inf row unchanged") {
  std::vector<float> x = {0.0f, -INFINITY, 0.0f};
  log_softmax(x.data(), x.size());
  CHECK(std::fabs(static_cast<double>(x[0]) + std::log(2.0)) <= 1e-7);
  CHECK(x[1] == -INFINITY);
  CHECK(x[0] == x[2]);
  std::vector<float> all(9, -INFINITY);
  log_softmax(all.data(), all.size());
  for (float v : all) CHECK(v == -INFINITY);
  float single = 42.0f;
  log_softmax(&single, 1);
  CHECK(single == 0.0f);
}

TEST_CASE("kernels/log_sum_exp: matches a double reference and log_softmax's normalizer") {
  Random rng(29);
  for (size_t n : kSizes) {
    for (float offset : {0.0f, 1000.0f, -1000.0f}) {
      std::vector<float> x(n);
      for (float& v : x) v = offset + rng.normal(0.0f, 5.0f);
      double m = -std::numeric_limits<double>::infinity();
      // Written out: GCC 12.2 for aarch64 crashes (ICE in vect_transform_reduction)
      // vectorizing an fmax reduction in double (docs: DESIGN.md, ARM).
      for (float v : x) m = static_cast<double>(v) > m ? static_cast<double>(v) : m;
      double total = 0.0;
      for (float v : x) total += std::exp(static_cast<double>(v) - m);
      const double want = m + std::log(total);
      const float got = log_sum_exp(x.data(), n);
      CAPTURE(n);
      CAPTURE(offset);
      CHECK(std::fabs(static_cast<double>(got) - want) <= 1e-6 * std::fmax(1.0, std::fabs(want)));
      // log_softmax(x)[i] + log_sum_exp(x) gives x back (same normalizer).
      std::vector<float> y = x;
      CHECK(log_softmax(y.data(), n) == got);  // the normalizer it returns
      CHECK(std::fabs(static_cast<double>(y[0] + got) - static_cast<double>(x[0])) <=
            1e-6 * std::fmax(1.0, std::fabs(static_cast<double>(x[0]))));
    }
  }
  const float large[3] = {1000.0f, 1000.0f, -INFINITY};
  CHECK(log_sum_exp(large, 3) == doctest::Approx(1000.0 + std::log(2.0)));
  const float none[2] = {-INFINITY, -INFINITY};
  CHECK(log_sum_exp(none, 2) == -INFINITY);
}

// The search refuses a row whose normalizer is not finite (an overflowed
// model), so a single NaN or +inf anywhere in a row of any length, at any
// position (vector body or tail), must make it non-finite.
TEST_CASE("kernels/log_sum_exp and log_softmax: one NaN or +inf makes the normalizer non-finite") {
  Random rng(31);
  for (size_t n : kSizes) {
    for (float bad : {NAN, INFINITY}) {
      for (size_t at : {size_t{0}, n / 2, n - 1}) {
        std::vector<float> x(n);
        for (float& v : x) v = rng.normal(0.0f, 3.0f);
        x[at] = bad;
        CAPTURE(n);
        CAPTURE(at);
        CAPTURE(bad);
        CHECK_FALSE(std::isfinite(log_sum_exp(x.data(), n)));
        CHECK_FALSE(std::isfinite(log_softmax(x.data(), n)));
      }
    }
  }
  std::vector<float> all_nan(37, NAN);
  CHECK_FALSE(std::isfinite(log_sum_exp(all_nan.data(), all_nan.size())));
  CHECK_FALSE(std::isfinite(log_softmax(all_nan.data(), all_nan.size())));
  std::vector<float> all_minus_inf(37, -INFINITY);
  CHECK_FALSE(std::isfinite(log_softmax(all_minus_inf.data(), all_minus_inf.size())));
}

}  // namespace
}  // namespace edgemt::kernels
