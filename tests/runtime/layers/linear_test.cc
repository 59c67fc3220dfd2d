// Linear (XNNPACK fully_connected) against a naive double GEMM on odd and
// large shapes, with and without bias and fused ReLU; the same operator run
// with changing row counts and thread pools; no XNNPACK allocation in run().
#include "layers/linear.h"

#include <doctest/doctest.h>

#include <xnnpack.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/xnnpack_runtime.h"
#include "support/kernel_testing.h"
#include "support/thread_pool.h"

namespace edgemt {
namespace {

using testing::Random;

using testing::Pool;

// XNNPACK may read XNN_EXTRA_BYTES past the input.
constexpr size_t kPadFloats = XNN_EXTRA_BYTES / sizeof(float) + 16;

struct Reference {
  std::vector<double> y;        // [rows, out], before ReLU
  std::vector<double> abs_sum;  // [rows, out]: sum |x·w| + |b|, the error scale
};

Reference naive_linear(const std::vector<float>& x, size_t rows, const std::vector<float>& w,
                       const float* b, size_t in, size_t out) {
  Reference r;
  r.y.assign(rows * out, 0.0);
  r.abs_sum.assign(rows * out, 0.0);
  for (size_t i = 0; i < rows; ++i) {
    for (size_t o = 0; o < out; ++o) {
      double sum = b != nullptr ? static_cast<double>(b[o]) : 0.0;
      double scale = b != nullptr ? std::fabs(static_cast<double>(b[o])) : 0.0;
      for (size_t k = 0; k < in; ++k) {
        const double p = static_cast<double>(x[i * in + k]) * static_cast<double>(w[o * in + k]);
        sum += p;
        scale += std::fabs(p);
      }
      r.y[i * out + o] = sum;
      r.abs_sum[i * out + o] = scale;
    }
  }
  return r;
}

// Worst case of any float summation order: (in + 2) roundings of at most
// 2^-24 relative to the sum of magnitudes.
bool close_to(const std::vector<float>& y, const Reference& ref, size_t in, bool relu,
              double* worst) {
  bool ok = true;
  *worst = 0.0;
  for (size_t i = 0; i < ref.y.size(); ++i) {
    const double expected = relu ? std::max(0.0, ref.y[i]) : ref.y[i];
    const double bound = static_cast<double>(in + 2) * std::ldexp(1.0, -24) * ref.abs_sum[i] + 1e-30;
    const double ratio = std::fabs(static_cast<double>(y[i]) - expected) / bound;
    if (!(ratio <= 1.0)) ok = false;
    if (ratio > *worst) *worst = ratio;
    if (relu && !(y[i] >= 0.0f)) ok = false;
  }
  return ok;
}

TEST_CASE("layers/linear: matches a naive double GEMM on odd shapes with bias and ReLU") {
  REQUIRE(ensure_xnnpack_initialized().is_ok());
  Random rng(11);
  for (size_t in : {size_t{5}, size_t{64}, size_t{257}}) {
    for (size_t out : {size_t{1}, size_t{7}, size_t{300}}) {
      const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.5f);
      const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
      for (int variant = 0; variant < 4; ++variant) {
        const bool with_bias = (variant & 1) != 0;
        const bool relu = (variant & 2) != 0;
        CAPTURE(in);
        CAPTURE(out);
        CAPTURE(with_bias);
        CAPTURE(relu);
        Linear linear;
        const Status created =
            linear.create(w.data(), with_bias ? b.data() : nullptr, in, out, relu);
        REQUIRE_MESSAGE(created.is_ok(), created.message());
        CHECK(linear.in_features() == in);
        CHECK(linear.out_features() == out);
        for (size_t rows : {size_t{1}, size_t{3}, size_t{17}}) {
          CAPTURE(rows);
          std::vector<float> x = rng.normal_vector(rows * in + kPadFloats, 0.0f, 1.0f);
          std::vector<float> y(rows * out, NAN);
          const Status ran = linear.run(x.data(), rows, y.data(), nullptr);
          REQUIRE_MESSAGE(ran.is_ok(), ran.message());
          const Reference ref = naive_linear(x, rows, w, with_bias ? b.data() : nullptr, in, out);
          double worst = 0.0;
          CHECK_MESSAGE(close_to(y, ref, in, relu, &worst), "worst error / bound = " << worst);
        }
      }
    }
  }
}

TEST_CASE("layers/linear: ReLU clamps exactly at zero and keeps positive outputs") {
  REQUIRE(ensure_xnnpack_initialized().is_ok());
  Random rng(12);
  const size_t in = 64, out = 300, rows = 17;
  const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.5f);
  const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
  const std::vector<float> x = rng.normal_vector(rows * in + kPadFloats, 0.0f, 1.0f);
  Linear plain, relu;
  REQUIRE(plain.create(w.data(), b.data(), in, out, false).is_ok());
  REQUIRE(relu.create(w.data(), b.data(), in, out, true).is_ok());
  std::vector<float> y(rows * out), z(rows * out);
  REQUIRE(plain.run(x.data(), rows, y.data(), nullptr).is_ok());
  REQUIRE(relu.run(x.data(), rows, z.data(), nullptr).is_ok());
  size_t negatives = 0;
  bool ok = true;
  for (size_t i = 0; i < y.size(); ++i) {
    if (y[i] < 0.0f) {
      ++negatives;
      ok &= z[i] == 0.0f;
    } else {
      ok &= z[i] == y[i];
    }
  }
  CHECK(ok);
  CHECK(negatives > y.size() / 4);  // the data does exercise the clamp
}

TEST_CASE("layers/linear: rows change between runs of one operator") {
  REQUIRE(ensure_xnnpack_initialized().is_ok());
  Random rng(13);
  const size_t in = 257, out = 7;
  const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.5f);
  const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
  Linear linear;
  REQUIRE(linear.create(w.data(), b.data(), in, out, false).is_ok());
  for (size_t rows : {size_t{17}, size_t{1}, size_t{3}, size_t{17}, size_t{1}}) {
    CAPTURE(rows);
    const std::vector<float> x = rng.normal_vector(rows * in + kPadFloats, 0.0f, 1.0f);
    std::vector<float> y(rows * out + 8, NAN);
    REQUIRE(linear.run(x.data(), rows, y.data(), nullptr).is_ok());
    // Nothing written past [rows, out].
    bool untouched = true;
    for (size_t i = rows * out; i < y.size(); ++i) untouched &= std::isnan(y[i]);
    CHECK(untouched);
    y.resize(rows * out);
    double worst = 0.0;
    CHECK_MESSAGE(close_to(y, naive_linear(x, rows, w, b.data(), in, out), in, false, &worst),
                  "worst error / bound = " << worst);
  }
  // rows == 0 is a no-op.
  float sentinel = 42.0f;
  CHECK(linear.run(nullptr, 0, &sentinel, nullptr).is_ok());
  CHECK(sentinel == 42.0f);
}

TEST_CASE("layers/linear: column blocks on a pool give the same bits as one operator") {
  // Linears created for 2, 3 and 8 threads split W into column blocks (one
  // XNNPACK operator each, edges at multiples of 16 columns); each output
  // is the same dot product as in the single operator of a 1-thread Linear.
  REQUIRE(ensure_xnnpack_initialized().is_ok());
  Random rng(14);
  for (size_t threads : {size_t{2}, size_t{3}, size_t{8}}) {
    Pool pool = testing::make_pool(threads);
    REQUIRE(pool != nullptr);
    const Parallel always(pool.get(), 0);  // threshold 0: blocks always run on the pool
    for (size_t out : {size_t{7}, size_t{300}, size_t{1000}, size_t{1037}}) {
      for (size_t in : {size_t{1}, size_t{64}, size_t{257}}) {
        const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.5f);
        const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
        Linear single, blocked;
        REQUIRE(single.create(w.data(), b.data(), in, out, true).is_ok());
        REQUIRE(blocked.create(w.data(), b.data(), in, out, true, threads).is_ok());
        CHECK(single.column_blocks() == 1);
        CHECK(blocked.column_blocks() == std::min<size_t>({2 * threads, out / 64 ? out / 64 : 1, 16}));
        for (size_t rows : {size_t{1}, size_t{3}, size_t{17}}) {
          CAPTURE(threads);
          CAPTURE(out);
          CAPTURE(in);
          CAPTURE(rows);
          const std::vector<float> x = rng.normal_vector(rows * in + kPadFloats, 0.0f, 1.0f);
          std::vector<float> serial(rows * out), threaded(rows * out), caller(rows * out);
          REQUIRE(single.run(x.data(), rows, serial.data(), nullptr).is_ok());
          REQUIRE(blocked.run(x.data(), rows, threaded.data(), always).is_ok());
          REQUIRE(blocked.run(x.data(), rows, caller.data(), nullptr).is_ok());  // blocks in turn
          CHECK(testing::same_bits(serial.data(), threaded.data(), serial.size()));
          CHECK(testing::same_bits(serial.data(), caller.data(), serial.size()));
        }
      }
    }
  }
}

TEST_CASE("layers/linear: XNNPACK allocates in create() and never in run()") {
  REQUIRE(ensure_xnnpack_initialized().is_ok());
  Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  Random rng(15);
  const size_t in = 64, out = 300;
  const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.5f);
  const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
  const std::vector<float> x = rng.normal_vector(17 * in + kPadFloats, 0.0f, 1.0f);
  std::vector<float> y(17 * out);

  const uint64_t before_create = xnnpack_allocation_count();
  Linear linear, blocked;
  REQUIRE(linear.create(w.data(), b.data(), in, out, false).is_ok());
  REQUIRE(blocked.create(w.data(), b.data(), in, out, false, 2).is_ok());
  const uint64_t after_create = xnnpack_allocation_count();
  CHECK(after_create > before_create);  // the packed weights at least

  for (size_t rows : {size_t{17}, size_t{1}, size_t{3}, size_t{17}}) {
    REQUIRE(linear.run(x.data(), rows, y.data(), nullptr).is_ok());
    REQUIRE(blocked.run(x.data(), rows, y.data(), nullptr).is_ok());
    REQUIRE(blocked.run(x.data(), rows, y.data(), Parallel(pool.get(), 0)).is_ok());
  }
  CHECK(xnnpack_allocation_count() == after_create);
}

TEST_CASE("layers/linear: a moved operator still runs and bad shapes fail at create") {
  REQUIRE(ensure_xnnpack_initialized().is_ok());
  Random rng(16);
  const size_t in = 5, out = 7, rows = 3;
  const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.5f);
  const std::vector<float> x = rng.normal_vector(rows * in + kPadFloats, 0.0f, 1.0f);
  Linear first;
  REQUIRE(first.create(w.data(), nullptr, in, out, false).is_ok());
  Linear moved(std::move(first));
  Linear assigned;
  assigned = std::move(moved);
  CHECK(assigned.in_features() == in);
  CHECK(assigned.out_features() == out);
  std::vector<float> y(rows * out);
  REQUIRE(assigned.run(x.data(), rows, y.data(), nullptr).is_ok());
  double worst = 0.0;
  CHECK(close_to(y, naive_linear(x, rows, w, nullptr, in, out), in, false, &worst));

  Linear empty_input;
  const Status status = empty_input.create(w.data(), nullptr, 0, out, false);
  CHECK(status.code() == StatusCode::kBackendError);
}

}  // namespace
}  // namespace edgemt
