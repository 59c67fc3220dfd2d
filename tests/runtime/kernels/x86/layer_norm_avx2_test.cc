// The AVX2 LayerNorm gives the portable kernel's bits (the portable one is
// checked against a double-precision reference in ../layer_norm_test.cc):
// row lengths around the 8-lane chunks and the 512-element blocks of the
// mean, large means, constant rows, non-finite values, every aliasing of
// add_layer_norm; skipped on CPUs without AVX2.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/layer_norm.h"
#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::Random;
using testing::same_bits;

// rows of `dim` values: normal, a large mean over a small spread, constant,
// one with an inf, one with a NaN.
std::vector<float> test_rows(Random& rng, size_t dim) {
  std::vector<float> x = rng.normal_vector(5 * dim, 0.0f, 2.0f);
  for (size_t i = 0; i < dim; ++i) {
    x[dim + i] = 1000.0f + 0.01f * x[dim + i];
    x[2 * dim + i] = 3.25f;
  }
  x[3 * dim + dim / 2] = INFINITY;
  x[4 * dim + dim / 3] = NAN;
  return x;
}

TEST_CASE("kernels/layer_norm_avx2: the portable kernel's bits" * doctest::skip(!cpu_features().avx2)) {
  Random rng(23);
  for (size_t dim : {1, 3, 8, 9, 15, 64, 255, 256, 511, 512, 513, 1000, 1024, 1031}) {
    CAPTURE(dim);
    const size_t rows = 5;
    const std::vector<float> x = test_rows(rng, dim);
    const std::vector<float> residual = rng.normal_vector(rows * dim, 0.5f, 1.0f);
    const std::vector<float> gamma = rng.normal_vector(dim, 1.0f, 0.2f);
    const std::vector<float> beta = rng.normal_vector(dim, 0.0f, 0.2f);
    const float eps = 1e-5f;

    std::vector<float> want(rows * dim + 8, -7.0f), got(rows * dim + 8, -7.0f);
    layer_norm_portable(x.data(), gamma.data(), beta.data(), rows, dim, eps, want.data());
    layer_norm_avx2(x.data(), gamma.data(), beta.data(), rows, dim, eps, got.data());
    CHECK(same_bits(got.data(), want.data(), got.size()));  // past the rows: untouched

    add_layer_norm_portable(x.data(), residual.data(), gamma.data(), beta.data(), rows, dim, eps,
                            want.data());
    add_layer_norm_avx2(x.data(), residual.data(), gamma.data(), beta.data(), rows, dim, eps,
                        got.data());
    CHECK(same_bits(got.data(), want.data(), got.size()));

    // In place: y aliases x, then y aliases the residual.
    std::vector<float> in_x = x;
    layer_norm_avx2(in_x.data(), gamma.data(), beta.data(), rows, dim, eps, in_x.data());
    layer_norm_portable(x.data(), gamma.data(), beta.data(), rows, dim, eps, want.data());
    CHECK(same_bits(in_x.data(), want.data(), rows * dim));
    add_layer_norm_portable(x.data(), residual.data(), gamma.data(), beta.data(), rows, dim, eps,
                            want.data());
    in_x = x;
    add_layer_norm_avx2(in_x.data(), residual.data(), gamma.data(), beta.data(), rows, dim, eps,
                        in_x.data());
    CHECK(same_bits(in_x.data(), want.data(), rows * dim));
    std::vector<float> in_residual = residual;
    add_layer_norm_avx2(x.data(), in_residual.data(), gamma.data(), beta.data(), rows, dim, eps,
                        in_residual.data());
    CHECK(same_bits(in_residual.data(), want.data(), rows * dim));
  }
}

}  // namespace
}  // namespace edgemt::kernels
