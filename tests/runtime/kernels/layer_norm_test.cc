// layer_norm / add_layer_norm against a double-precision reference.
#include "kernels/layer_norm.h"

#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <vector>

#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;

// torch.nn.LayerNorm in double: biased variance, eps inside the sqrt.
std::vector<double> reference_layer_norm(const std::vector<double>& x, const float* gamma,
                                         const float* beta, size_t rows, size_t dim, float eps) {
  std::vector<double> y(rows * dim);
  for (size_t r = 0; r < rows; ++r) {
    double mean = 0.0;
    for (size_t i = 0; i < dim; ++i) mean += x[r * dim + i];
    mean /= static_cast<double>(dim);
    double var = 0.0;
    for (size_t i = 0; i < dim; ++i) {
      const double d = x[r * dim + i] - mean;
      var += d * d;
    }
    var /= static_cast<double>(dim);
    const double rstd = 1.0 / std::sqrt(var + static_cast<double>(eps));
    for (size_t i = 0; i < dim; ++i) {
      y[r * dim + i] = (x[r * dim + i] - mean) * rstd * static_cast<double>(gamma[i]) +
                       static_cast<double>(beta[i]);
    }
  }
  return y;
}

// Largest |y - ref| / (1 + |ref|): relative for large outputs, absolute
// near zero (where an output is the difference of two O(1) terms).
double max_error(const float* y, const std::vector<double>& ref) {
  double worst = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double e = std::fabs(static_cast<double>(y[i]) - ref[i]) / (1.0 + std::fabs(ref[i]));
    if (!(e <= worst)) worst = e;  // NaN propagates as a failure
  }
  return worst;
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

constexpr size_t kDims[] = {1, 2, 3, 7, 8, 9, 17, 255, 256, 512, 1023, 1024};
constexpr double kTolerance = 2e-6;

TEST_CASE("kernels/layer_norm: matches double reference on odd and even dims") {
  Random rng(1);
  for (size_t dim : kDims) {
    for (size_t rows : {size_t{1}, size_t{3}}) {
      for (float mean : {0.0f, 3.0f, -40.0f}) {
        const auto x = rng.normal_vector(rows * dim, mean, 2.0f);
        const auto gamma = rng.normal_vector(dim, 1.0f, 0.3f);
        const auto beta = rng.normal_vector(dim, 0.0f, 0.5f);
        std::vector<float> y(rows * dim, NAN);
        layer_norm(x.data(), gamma.data(), beta.data(), rows, dim, 1e-5f, y.data());
        const auto ref = reference_layer_norm(widen(x), gamma.data(), beta.data(), rows, dim, 1e-5f);
        CAPTURE(dim);
        CAPTURE(rows);
        CAPTURE(mean);
        CHECK(max_error(y.data(), ref) <= kTolerance);
      }
    }
  }
}

TEST_CASE("kernels/layer_norm: large mean against small spread (two-pass accuracy)") {
  Random rng(2);
  for (size_t dim : {size_t{64}, size_t{512}, size_t{1000}}) {
    auto x = rng.normal_vector(dim, 1000.0f, 1.0f);
    std::vector<float> gamma(dim, 1.0f), beta(dim, 0.0f), y(dim);
    layer_norm(x.data(), gamma.data(), beta.data(), 1, dim, 1e-5f, y.data());
    const auto ref = reference_layer_norm(widen(x), gamma.data(), beta.data(), 1, dim, 1e-5f);
    CAPTURE(dim);
    // Outputs are O(1); a one-pass variance would be off by ~1e-1 here.
    CHECK(max_error(y.data(), ref) <= 1e-5);
  }
}

TEST_CASE("kernels/layer_norm: constant row gives beta - eps matters") {
  const size_t dim = 17;
  std::vector<float> x(dim, 5.0f), gamma(dim, 2.0f), beta(dim), y(dim);
  for (size_t i = 0; i < dim; ++i) beta[i] = static_cast<float>(i) * 0.25f;
  layer_norm(x.data(), gamma.data(), beta.data(), 1, dim, 1e-5f, y.data());
  for (size_t i = 0; i < dim; ++i) CHECK(y[i] == beta[i]);

  // var = 1 (values +-1), eps = 3: rstd = 1/2.
  std::vector<float> z = {1.0f, -1.0f, 1.0f, -1.0f}, g(4, 1.0f), b(4, 0.0f), out(4);
  layer_norm(z.data(), g.data(), b.data(), 1, 4, 3.0f, out.data());
  CHECK(out[0] == 0.5f);
  CHECK(out[1] == -0.5f);
}

TEST_CASE("kernels/layer_norm: in place (y aliases x) equals out of place") {
  Random rng(3);
  for (size_t dim : kDims) {
    const size_t rows = 4;
    const auto x = rng.normal_vector(rows * dim, 0.5f, 1.0f);
    const auto gamma = rng.normal_vector(dim, 1.0f, 0.3f);
    const auto beta = rng.normal_vector(dim, 0.0f, 0.5f);
    std::vector<float> out(rows * dim);
    layer_norm(x.data(), gamma.data(), beta.data(), rows, dim, 1e-5f, out.data());
    std::vector<float> inplace = x;
    layer_norm(inplace.data(), gamma.data(), beta.data(), rows, dim, 1e-5f, inplace.data());
    CAPTURE(dim);
    CHECK(testing::same_bits(out.data(), inplace.data(), rows * dim));
  }
}

TEST_CASE("kernels/layer_norm: rows are independent (row r of a batch equals a single-row call)") {
  Random rng(4);
  const size_t dim = 255, rows = 5;
  const auto x = rng.normal_vector(rows * dim, 0.0f, 1.0f);
  const auto gamma = rng.normal_vector(dim, 1.0f, 0.3f);
  const auto beta = rng.normal_vector(dim, 0.0f, 0.5f);
  std::vector<float> batch(rows * dim), single(dim);
  layer_norm(x.data(), gamma.data(), beta.data(), rows, dim, 1e-5f, batch.data());
  for (size_t r = 0; r < rows; ++r) {
    layer_norm(x.data() + r * dim, gamma.data(), beta.data(), 1, dim, 1e-5f, single.data());
    CHECK(testing::same_bits(single.data(), batch.data() + r * dim, dim));
  }
}

TEST_CASE("kernels/add_layer_norm: equals LayerNorm(x + residual) - with every aliasing") {
  Random rng(5);
  for (size_t dim : kDims) {
    const size_t rows = 3;
    const auto x = rng.normal_vector(rows * dim, 0.0f, 1.0f);
    const auto res = rng.normal_vector(rows * dim, 1.0f, 3.0f);
    const auto gamma = rng.normal_vector(dim, 1.0f, 0.3f);
    const auto beta = rng.normal_vector(dim, 0.0f, 0.5f);
    std::vector<float> y(rows * dim, NAN);
    add_layer_norm(x.data(), res.data(), gamma.data(), beta.data(), rows, dim, 1e-5f, y.data());

    std::vector<double> sum(rows * dim);
    for (size_t i = 0; i < sum.size(); ++i) {
      sum[i] = static_cast<double>(x[i] + res[i]);  // the float sum, as PyTorch forms it
    }
    const auto ref = reference_layer_norm(sum, gamma.data(), beta.data(), rows, dim, 1e-5f);
    CAPTURE(dim);
    CHECK(max_error(y.data(), ref) <= kTolerance);

    std::vector<float> alias_x = x;
    add_layer_norm(alias_x.data(), res.data(), gamma.data(), beta.data(), rows, dim, 1e-5f,
                   alias_x.data());
    CHECK(testing::same_bits(alias_x.data(), y.data(), rows * dim));
    std::vector<float> alias_res = res;
    add_layer_norm(x.data(), alias_res.data(), gamma.data(), beta.data(), rows, dim, 1e-5f,
                   alias_res.data());
    CHECK(testing::same_bits(alias_res.data(), y.data(), rows * dim));
  }
}

TEST_CASE("kernels/layer_norm: the kernel this CPU runs gives the portable one's bits") {
  Random rng(24);
  const size_t dim = 300, rows = 5;
  const std::vector<float> x = rng.normal_vector(rows * dim, 3.0f, 2.0f);
  const std::vector<float> residual = rng.normal_vector(rows * dim, 0.0f, 1.0f);
  const std::vector<float> gamma = rng.normal_vector(dim, 1.0f, 0.2f);
  const std::vector<float> beta = rng.normal_vector(dim, 0.0f, 0.2f);
  std::vector<float> want(rows * dim), got(rows * dim);
  layer_norm_portable(x.data(), gamma.data(), beta.data(), rows, dim, 1e-5f, want.data());
  layer_norm(x.data(), gamma.data(), beta.data(), rows, dim, 1e-5f, got.data());
  CHECK(testing::same_bits(got.data(), want.data(), got.size()));
  add_layer_norm_portable(x.data(), residual.data(), gamma.data(), beta.data(), rows, dim, 1e-5f,
                          want.data());
  add_layer_norm(x.data(), residual.data(), gamma.data(), beta.data(), rows, dim, 1e-5f,
                 got.data());
  CHECK(testing::same_bits(got.data(), want.data(), got.size()));
}

TEST_CASE("kernels/layer_norm: zero rows or zero dim write nothing") {
  float x[2] = {1.0f, 2.0f}, g[2] = {1.0f, 1.0f}, b[2] = {0.0f, 0.0f};
  float y[2] = {7.0f, 7.0f};
  layer_norm(x, g, b, 0, 2, 1e-5f, y);
  layer_norm(x, g, b, 2, 0, 1e-5f, y);
  add_layer_norm(x, x, g, b, 0, 2, 1e-5f, y);
  CHECK(y[0] == 7.0f);
  CHECK(y[1] == 7.0f);
}

}  // namespace
}  // namespace edgemt::kernels
