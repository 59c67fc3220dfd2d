// activation_step: every activation over [rows, dim] on 1- to 3-thread
// pools gives the bits of apply_activation over the whole buffer on one
// thread, and touches nothing past rows × dim.
#include "models/transformer/activation_step.h"

#include <doctest/doctest.h>

#include <vector>

#include "support/kernel_testing.h"
#include "support/thread_pool.h"

using namespace edgemt::transformer;  // the family under test

namespace edgemt {
namespace {

using testing::Random;
using testing::same_bits;

TEST_CASE("models/transformer/activation_step: apply_activation's bits on any pool") {
  Random rng(37);
  for (Activation activation : {Activation::kRelu, Activation::kGelu, Activation::kSwish}) {
    for (size_t threads : {size_t{1}, size_t{2}, size_t{3}}) {
      testing::Pool pool = testing::make_pool(threads);
      REQUIRE(pool != nullptr);
      for (size_t rows : {size_t{1}, size_t{7}, size_t{128}}) {
        for (size_t dim : {size_t{5}, size_t{64}, size_t{2048}}) {
          CAPTURE(activation_name(activation));
          CAPTURE(threads);
          CAPTURE(rows);
          CAPTURE(dim);
          const std::vector<float> x = rng.normal_vector(rows * dim + 9, 0.0f, 3.0f);
          std::vector<float> want = x, got = x;
          kernels::apply_activation(activation, want.data(), rows * dim);
          activation_step(Parallel(pool.get(), 0), activation, got.data(), rows, dim);  // always split
          CHECK(same_bits(got.data(), want.data(), x.size()));
        }
      }
    }
  }
}

}  // namespace
}  // namespace edgemt
