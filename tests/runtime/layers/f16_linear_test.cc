// F16Linear (XNNPACK f16 GEMM between f32 layers) against a naive double
// GEMM on the half-rounded operands, with and without bias and ReLU; 1 and 2
// threads (column blocks); missing scratch. Skipped where XNNPACK has no f16 GEMM.
#include "layers/f16_linear.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "core/xnnpack_runtime.h"
#include "kernels/fp16.h"
#include "support/kernel_testing.h"
#include "support/thread_pool.h"

namespace edgemt {
namespace {

using testing::Random;

double half(float v) { return static_cast<double>(kernels::f16_to_f32(kernels::f32_to_f16(v))); }

struct Scratch {
  Scratch(size_t rows, size_t in, size_t out) : input(rows * in + 16), output(rows * out + 16) {
    view.max_rows = rows;
    view.max_depth = in;
    view.max_out = out;
    view.half_input = input.data();
    view.half_output = output.data();
  }
  std::vector<uint16_t> input, output;
  LinearScratch view;
};

bool f16_gemm_available() {
  REQUIRE(ensure_xnnpack_initialized().is_ok());
  const uint16_t one = 0x3C00;
  F16Linear probe;
  return probe.create(&one, nullptr, 1, 1, false).is_ok();
}

TEST_CASE("layers/f16_linear: matches a naive GEMM on half operands within f16 rounding") {
  if (!f16_gemm_available()) {
    MESSAGE("XNNPACK has no f16 GEMM on this CPU: skipped");
    return;
  }
  Random rng(31);
  testing::Pool pool = testing::make_pool(2);
  for (size_t in : {size_t{5}, size_t{64}, size_t{257}}) {
    for (size_t out : {size_t{1}, size_t{7}, size_t{300}}) {
      std::vector<uint16_t> w(out * in);
      std::vector<float> w_value(out * in);
      for (size_t i = 0; i < w.size(); ++i) {
        w[i] = kernels::f32_to_f16(rng.normal(0.0f, 0.5f));
        w_value[i] = kernels::f16_to_f32(w[i]);
      }
      const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
      for (int variant = 0; variant < 4; ++variant) {
        const bool with_bias = (variant & 1) != 0, relu = (variant & 2) != 0;
        F16Linear linear, blocked;  // blocked: created for 2 threads (column blocks)
        REQUIRE(linear.create(w.data(), with_bias ? b.data() : nullptr, in, out, relu).is_ok());
        REQUIRE(blocked.create(w.data(), with_bias ? b.data() : nullptr, in, out, relu, 2).is_ok());
        const size_t rows = 9;
        Scratch scratch(rows, in, out);
        const std::vector<float> x = rng.normal_vector(rows * in + 16, 0.0f, 1.0f);
        std::vector<float> y(rows * out), threaded(rows * out);
        REQUIRE(linear.run(x.data(), rows, y.data(), nullptr, scratch.view).is_ok());
        const Parallel always(pool.get(), 0);
        REQUIRE(blocked.run(x.data(), rows, threaded.data(), always, scratch.view).is_ok());
        bool within = true;
        for (size_t r = 0; r < rows; ++r) {
          for (size_t o = 0; o < out; ++o) {
            double sum = with_bias ? half(b[o]) : 0.0, magnitude = std::fabs(sum);
            for (size_t k = 0; k < in; ++k) {
              const double p = half(x[r * in + k]) * static_cast<double>(w_value[o * in + k]);
              sum += p;
              magnitude += std::fabs(p);
            }
            if (relu) sum = sum > 0.0 ? sum : 0.0;
            // Half precision (2^-11) per partial sum, over at most `in` sums.
            const double bound = (static_cast<double>(in) + 2.0) * std::ldexp(1.0, -11) * magnitude + 1e-6;
            within = within && std::fabs(static_cast<double>(y[r * out + o]) - sum) <= bound;
          }
        }
        CAPTURE(in);
        CAPTURE(out);
        CAPTURE(variant);
        CHECK(within);
        CHECK(testing::same_bits(y.data(), threaded.data(), y.size()));
      }
    }
  }
}

TEST_CASE("layers/f16_linear: run needs scratch for its rows and widths") {
  if (!f16_gemm_available()) {
    MESSAGE("XNNPACK has no f16 GEMM on this CPU: skipped");
    return;
  }
  const std::vector<uint16_t> w(6, 0x3C00);  // [2, 3] of 1.0
  F16Linear linear;
  REQUIRE(linear.create(w.data(), nullptr, 3, 2, false).is_ok());
  const std::vector<float> x(3 * 2 + 16, 1.0f);
  std::vector<float> y(4);
  Scratch narrow(2, 3, 1);
  CHECK(linear.run(x.data(), 2, y.data(), nullptr, narrow.view).code() == StatusCode::kFailedPrecondition);
  Scratch few(1, 3, 2);
  CHECK(linear.run(x.data(), 2, y.data(), nullptr, few.view).code() == StatusCode::kFailedPrecondition);
  Scratch fits(2, 3, 2);
  REQUIRE(linear.run(x.data(), 2, y.data(), nullptr, fits.view).is_ok());
  CHECK(y == std::vector<float>{3.0f, 3.0f, 3.0f, 3.0f});
}

}  // namespace
}  // namespace edgemt
