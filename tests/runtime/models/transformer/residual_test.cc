// residual_step and sublayer_input for post-norm and pre-norm against a
// naive double LayerNorm:
//   post-norm: x = LN(x + out), the sub-layer reads x itself
//   pre-norm:  x = x + out,     the sub-layer reads LN(x) from scratch
#include "models/transformer/residual.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "support/kernel_testing.h"
#include "support/thread_pool.h"

using namespace edgemt::transformer;  // the family under test

namespace edgemt {
namespace {

using testing::Random;

constexpr double kTolerance = 2e-6;  // as the LayerNorm kernel tests

std::vector<double> naive_layer_norm(const std::vector<double>& x, const std::vector<float>& g,
                                     const std::vector<float>& b, size_t rows, size_t dim,
                                     double eps) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < rows; ++r) {
    double mean = 0.0;
    for (size_t i = 0; i < dim; ++i) mean += x[r * dim + i];
    mean /= static_cast<double>(dim);
    double var = 0.0;
    for (size_t i = 0; i < dim; ++i) var += (x[r * dim + i] - mean) * (x[r * dim + i] - mean);
    var /= static_cast<double>(dim);
    for (size_t i = 0; i < dim; ++i) {
      y[r * dim + i] = (x[r * dim + i] - mean) / std::sqrt(var + eps) * static_cast<double>(g[i]) +
                       static_cast<double>(b[i]);
    }
  }
  return y;
}

double max_error(const std::vector<float>& y, const std::vector<double>& ref) {
  double worst = 0.0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double e = std::fabs(static_cast<double>(y[i]) - ref[i]);
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

struct Data {
  std::vector<float> x, out, gamma, beta;
  NormWeights norm;
};

Data make_data(Random* rng, size_t rows, size_t dim) {
  Data d;
  d.x = rng->normal_vector(rows * dim, 0.5f, 2.0f);
  d.out = rng->normal_vector(rows * dim, -0.25f, 1.0f);
  d.gamma = rng->normal_vector(dim, 1.0f, 0.3f);
  d.beta = rng->normal_vector(dim, 0.0f, 0.3f);
  d.norm.weight = d.gamma.data();
  d.norm.bias = d.beta.data();
  return d;
}

constexpr size_t kDims[] = {1, 8, 17, 256};
constexpr size_t kRows[] = {1, 3, 9};

TEST_CASE("models/transformer/residual: post-norm residual_step is LN(x + out)") {
  Random rng(21);
  for (size_t dim : kDims) {
    for (size_t rows : kRows) {
      CAPTURE(dim);
      CAPTURE(rows);
      Data d = make_data(&rng, rows, dim);
      std::vector<double> sum(rows * dim);
      for (size_t i = 0; i < sum.size(); ++i) {
        sum[i] = static_cast<double>(d.x[i]) + static_cast<double>(d.out[i]);
      }
      const std::vector<float> out_before = d.out;
      residual_step(Parallel(), NormPlacement::kPostNorm, d.norm, 1e-5f, d.out.data(), rows, dim, d.x.data());
      CHECK(max_error(d.x, naive_layer_norm(sum, d.gamma, d.beta, rows, dim, 1e-5)) <= kTolerance);
      CHECK(testing::same_bits(d.out.data(), out_before.data(), d.out.size()));
    }
  }
}

TEST_CASE("models/transformer/residual: pre-norm residual_step is the plain float sum x + out") {
  Random rng(22);
  for (size_t dim : kDims) {
    for (size_t rows : kRows) {
      CAPTURE(dim);
      CAPTURE(rows);
      Data d = make_data(&rng, rows, dim);
      std::vector<float> expected(rows * dim);
      for (size_t i = 0; i < expected.size(); ++i) expected[i] = d.x[i] + d.out[i];
      residual_step(Parallel(), NormPlacement::kPreNorm, d.norm, 1e-5f, d.out.data(), rows, dim, d.x.data());
      CHECK(testing::same_bits(d.x.data(), expected.data(), expected.size()));
    }
  }
}

TEST_CASE("models/transformer/residual: post-norm sublayer_input is x itself and leaves scratch alone") {
  Random rng(23);
  const size_t rows = 3, dim = 17;
  Data d = make_data(&rng, rows, dim);
  const std::vector<float> x_before = d.x;
  std::vector<float> scratch(rows * dim, 7.0f);
  const float* input =
      sublayer_input(Parallel(), NormPlacement::kPostNorm, d.norm, 1e-5f, d.x.data(), rows, dim, scratch.data());
  CHECK(input == d.x.data());
  CHECK(testing::same_bits(d.x.data(), x_before.data(), d.x.size()));
  bool untouched = true;
  for (float v : scratch) untouched &= v == 7.0f;
  CHECK(untouched);
}

TEST_CASE("models/transformer/residual: pre-norm sublayer_input is LN(x) in scratch and x is unchanged") {
  Random rng(24);
  for (size_t dim : kDims) {
    for (size_t rows : kRows) {
      CAPTURE(dim);
      CAPTURE(rows);
      Data d = make_data(&rng, rows, dim);
      const std::vector<float> x_before = d.x;
      std::vector<float> scratch(rows * dim + 4, NAN);
      const float* input = sublayer_input(Parallel(), NormPlacement::kPreNorm, d.norm, 1e-5f, d.x.data(), rows,
                                          dim, scratch.data());
      CHECK(input == scratch.data());
      CHECK(testing::same_bits(d.x.data(), x_before.data(), d.x.size()));
      const std::vector<double> wide(d.x.begin(), d.x.end());
      const std::vector<float> y(scratch.begin(), scratch.begin() + static_cast<long>(rows * dim));
      CHECK(max_error(y, naive_layer_norm(wide, d.gamma, d.beta, rows, dim, 1e-5)) <= kTolerance);
      for (size_t i = rows * dim; i < scratch.size(); ++i) CHECK(std::isnan(scratch[i]));
    }
  }
}

TEST_CASE("models/transformer/residual: a pre-norm sub-layer step equals the textbook x + f(LN(x))") {
  // One whole pre-norm step with f = doubling: sublayer_input, then
  // residual_step with the sub-layer's output.
  Random rng(25);
  const size_t rows = 4, dim = 8;
  Data d = make_data(&rng, rows, dim);
  const std::vector<double> wide(d.x.begin(), d.x.end());
  const std::vector<double> ln = naive_layer_norm(wide, d.gamma, d.beta, rows, dim, 1e-5);
  std::vector<float> scratch(rows * dim);
  const float* input =
      sublayer_input(Parallel(), NormPlacement::kPreNorm, d.norm, 1e-5f, d.x.data(), rows, dim, scratch.data());
  std::vector<float> f(rows * dim);
  for (size_t i = 0; i < f.size(); ++i) f[i] = 2.0f * input[i];
  residual_step(Parallel(), NormPlacement::kPreNorm, d.norm, 1e-5f, f.data(), rows, dim, d.x.data());
  std::vector<double> expected(rows * dim);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = wide[i] + 2.0 * ln[i];
  CHECK(max_error(d.x, expected) <= 4 * kTolerance + 1e-6);
}

}  // namespace
}  // namespace edgemt

namespace edgemt {
namespace {

TEST_CASE("models/transformer/residual: rows split over a pool give the serial bits") {
  testing::Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  const Parallel always(pool.get(), 0);  // threshold 0: always on the pool
  testing::Random rng(25);
  for (NormPlacement placement : {NormPlacement::kPostNorm, NormPlacement::kPreNorm}) {
    for (size_t rows : {size_t{1}, size_t{7}, size_t{128}}) {
      Data serial = make_data(&rng, rows, 256);
      Data split = serial;
      split.norm.weight = split.gamma.data();
      split.norm.bias = split.beta.data();
      std::vector<float> scratch_a(rows * 256), scratch_b(rows * 256);
      const float* in_a = sublayer_input(Parallel(), placement, serial.norm, 1e-5f, serial.x.data(), rows, 256, scratch_a.data());
      const float* in_b = sublayer_input(always, placement, split.norm, 1e-5f, split.x.data(), rows, 256, scratch_b.data());
      CHECK(testing::same_bits(in_a, in_b, rows * 256));
      residual_step(Parallel(), placement, serial.norm, 1e-5f, serial.out.data(), rows, 256, serial.x.data());
      residual_step(always, placement, split.norm, 1e-5f, split.out.data(), rows, 256, split.x.data());
      CHECK(testing::same_bits(serial.x.data(), split.x.data(), rows * 256));
    }
  }
}

}  // namespace
}  // namespace edgemt
