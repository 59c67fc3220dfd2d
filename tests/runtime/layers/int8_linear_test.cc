// Int8Linear (and Linear::create_int8) against the naive int8 reference:
// odd shapes with and without bias and ReLU, every row count up to the
// scratch, thread pools giving the same bits, and the errors a bad matrix or
// a missing scratch produce.
#include "layers/int8_linear.h"

#include <doctest/doctest.h>


#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "kernels/int8_gemm_sparse.h"
#include "layers/linear.h"
#include "support/int8_marian_reference.h"
#include "support/int8_reference.h"
#include "support/int8_scratch.h"
#include "support/kernel_testing.h"
#include "support/thread_pool.h"

namespace edgemt {
namespace {

using testing::Random;

using testing::Pool;

using Scratch = testing::Int8Scratch;

TEST_CASE("layers/int8_linear: matches the naive int8 reference on odd shapes, bias and ReLU") {
  Random rng(21);
  for (size_t in : {size_t{5}, size_t{64}, size_t{257}}) {
    for (size_t out : {size_t{1}, size_t{7}, size_t{300}}) {
      const testing::QuantizedWeights w = testing::random_int8_weights(rng, out, in);
      const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
      for (int variant = 0; variant < 8; ++variant) {
        const bool with_bias = (variant & 1) != 0;
        const bool relu = (variant & 2) != 0;
        const int32_t limit = (variant & 4) != 0 ? kernels::int8::kNarrowCodes : kernels::int8::kFullCodes;
        Int8Linear linear;
        REQUIRE(linear.create(w.q.data(), w.scale.data(), with_bias ? b.data() : nullptr, in, out, relu,
                              limit).is_ok());
        CHECK(linear.code_limit() == limit);
        CHECK(linear.in_features() == in);
        CHECK(linear.out_features() == out);
        CHECK(linear.packed_bytes() == kernels::int8::packed_bytes(out, in));
        CHECK(std::string(linear.kernel_name()) == kernels::int8::best_gemm_kernel().name);
        Scratch scratch(17, in);
        for (size_t rows : {size_t{1}, size_t{3}, size_t{17}}) {
          const std::vector<float> x = rng.normal_vector(rows * in, 0.0f, 1.0f);
          std::vector<float> y(rows * out, NAN);
          REQUIRE(linear.run(x.data(), rows, y.data(), nullptr, scratch.view).is_ok());
          const auto want = testing::reference_int8_gemm(
              testing::reference_quantize_rows(x, rows, in, limit), rows, in, w.q, w.scale,
              with_bias ? b.data() : nullptr, out, relu);
          CAPTURE(in);
          CAPTURE(out);
          CAPTURE(variant);
          CAPTURE(rows);
          CHECK(testing::same_bits(y.data(), want.data(), y.size()));
        }
      }
    }
  }
}

TEST_CASE("layers/int8_linear: 1 and 2 threads give the same bits (rows split too)") {
  Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  Random rng(22);
  const size_t in = 256, out = 1000;  // 63 column blocks
  const testing::QuantizedWeights w = testing::random_int8_weights(rng, out, in);
  const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
  Linear linear;
  REQUIRE(linear.create_int8(w.q.data(), w.scale.data(), b.data(), in, out, true).is_ok());
  CHECK(linear.is_int8());
  CHECK(linear.int8_kernel_name() != nullptr);
  Scratch scratch(200, in);
  // Threshold 0: quantization and GEMM are split for every row count; the
  // default threshold: only where the work is worth it (200 rows of 256:
  // the quantization too, ~13 µs by the estimate in Int8Linear::run).
  const Parallel always(pool.get(), 0);
  const Parallel by_default(pool.get());
  CHECK(by_default.worth(200 * in / 4));
  for (size_t rows : {size_t{1}, size_t{4}, size_t{40}, size_t{200}}) {
    const std::vector<float> x = rng.normal_vector(rows * in, 0.0f, 1.0f);
    std::vector<float> serial(rows * out), split(rows * out), defaulted(rows * out);
    REQUIRE(linear.run(x.data(), rows, serial.data(), nullptr, &scratch.view).is_ok());
    REQUIRE(linear.run(x.data(), rows, split.data(), always, &scratch.view).is_ok());
    REQUIRE(linear.run(x.data(), rows, defaulted.data(), by_default, &scratch.view).is_ok());
    CAPTURE(rows);
    CHECK(testing::same_bits(serial.data(), split.data(), serial.size()));
    CHECK(testing::same_bits(serial.data(), defaulted.data(), serial.size()));
  }
}

TEST_CASE("layers/int8_linear: a ReLU's output as input (set_sparse_input): the same bits") {
  // Inputs of 96% zeros take the zero-skipping kernel, 50% the dense one;
  // per-row and per-tensor ranges (Marian's), alone and on a pool.
  Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  const Parallel always(pool.get(), 0);
  Random rng(23);
  const size_t in = 1024, out = 300;
  const testing::QuantizedWeights w = testing::random_int8_weights(rng, out, in);
  const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
  for (bool tensor_range : {false, true}) {
    Linear plain, sparse;
    REQUIRE(plain.create_int8(w.q.data(), w.scale.data(), b.data(), in, out, false, nullptr,
                              tensor_range).is_ok());
    REQUIRE(sparse.create_int8(w.q.data(), w.scale.data(), b.data(), in, out, false, nullptr,
                               tensor_range).is_ok());
    CHECK(!plain.sparse_input());
    // On with a zero-skipping kernel beside this CPU's dense one (x86,
    // portable); on NEON there is none, and both Linears are the same.
    const bool available =
        kernels::int8::sparse_gemm_kernel(kernels::int8::best_gemm_kernel().kernel) != nullptr;
    CHECK(sparse.set_sparse_input() == available);
    CHECK(sparse.sparse_input() == available);
    Scratch scratch(64, in);
    for (size_t zeros_in_100 : {size_t{96}, size_t{50}}) {
      for (size_t rows : {size_t{1}, size_t{5}, size_t{64}}) {
        CAPTURE(tensor_range);
        CAPTURE(zeros_in_100);
        CAPTURE(rows);
        std::vector<float> x = rng.normal_vector(rows * in, 0.0f, 1.0f);
        for (float& v : x) v = rng.index(0, 99) < zeros_in_100 ? 0.0f : std::fabs(v);
        std::vector<float> want(rows * out), got(rows * out), threaded(rows * out);
        REQUIRE(plain.run(x.data(), rows, want.data(), nullptr, &scratch.view).is_ok());
        REQUIRE(sparse.run(x.data(), rows, got.data(), nullptr, &scratch.view).is_ok());
        REQUIRE(sparse.run(x.data(), rows, threaded.data(), always, &scratch.view).is_ok());
        CHECK(testing::same_bits(want.data(), got.data(), want.size()));
        CHECK(testing::same_bits(want.data(), threaded.data(), want.size()));
      }
    }
  }
}

TEST_CASE("layers/int8_linear: Marian's saturating sums (set_marian_sums), tensor and fixed ranges") {
  // A feed-forward block's second matrix: a ReLU's output, 1536 deep,
  // against weights that follow row 0's large values, so lanes saturate.
  Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  const Parallel always(pool.get(), 0);
  Random rng(61);
  const size_t in = 1536, out = 40, rows = 5;
  std::vector<float> x = rng.normal_vector(rows * in, 0.0f, 1.0f);
  for (float& v : x) v = v > 0.0f ? v : 0.0f;
  for (size_t k = 0; k < in; ++k) x[k] = (k / 32) % 2 == 0 ? 3.0f : 0.0f;
  testing::QuantizedWeights w = testing::random_int8_weights(rng, out, in);
  for (size_t n = 0; n < out; n += 2) {
    for (size_t k = 0; k < in; ++k) w.q[n * in + k] = static_cast<int8_t>(x[k] > 0.0f ? 120 : -5);
  }
  const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
  constexpr float kFixed = 127.0f / 3.0f;  // the alphas file's multiplier: x = 3 is code 127
  Scratch scratch(rows, in);
  for (int32_t lanes : {kernels::int8::kSsse3Lanes, kernels::int8::kAvx2Lanes,
                        kernels::int8::kAvx512bwLanes}) {
    for (bool fixed : {false, true}) {
      CAPTURE(lanes);
      CAPTURE(fixed);
      Linear linear;
      REQUIRE(linear.create_int8(w.q.data(), w.scale.data(), b.data(), in, out, false, nullptr,
                                 !fixed, fixed ? kFixed : 0.0f, lanes).is_ok());
      CHECK(!linear.set_sparse_input());  // the zero-skipping kernels sum exactly
      const testing::QuantizedRows xq =
          fixed ? testing::reference_quantize_fixed(x, rows, in, kernels::int8::kFullCodes, kFixed)
                : testing::reference_quantize_tensor(x, rows, in, kernels::int8::kFullCodes);
      const int32_t shift = fixed ? 127 : 0;
      const std::vector<float> want =
          testing::reference_marian_gemm(xq, rows, in, w, b.data(), out, false, lanes, shift);
      const std::vector<float> exact =
          testing::reference_int8_gemm(xq, rows, in, w.q, w.scale, b.data(), out, false, shift);
      CHECK(!testing::same_bits(want.data(), exact.data(), want.size()));  // it saturates
      std::vector<float> got(rows * out), threaded(rows * out);
      REQUIRE(linear.run(x.data(), rows, got.data(), nullptr, &scratch.view).is_ok());
      REQUIRE(linear.run(x.data(), rows, threaded.data(), always, &scratch.view).is_ok());
      CHECK(testing::same_bits(got.data(), want.data(), want.size()));
      CHECK(testing::same_bits(threaded.data(), want.data(), want.size()));
    }
  }
  // Only Marian's arithmetic, only its lane counts.
  Int8Linear per_row, tensor;
  REQUIRE(per_row.create(w.q.data(), w.scale.data(), nullptr, in, out, false,
                         kernels::int8::kFullCodes).is_ok());
  CHECK(per_row.set_marian_sums(16).code() == StatusCode::kInvalidArgument);
  CHECK(per_row.set_marian_sums(0).is_ok());
  REQUIRE(tensor.create(w.q.data(), w.scale.data(), nullptr, in, out, false,
                        kernels::int8::kFullCodes).is_ok());
  tensor.set_tensor_range(true);
  CHECK(tensor.set_marian_sums(12).code() == StatusCode::kInvalidArgument);
  CHECK(tensor.set_marian_sums(16).is_ok());
  CHECK(tensor.marian_sums() == 16);
}

TEST_CASE("layers/int8_linear: bad matrices and missing scratch are errors, not crashes") {
  const std::vector<int8_t> w = {1, -2, 3, 4, -128, 6};  // [2, 3]
  const std::vector<float> scale = {0.5f, 0.25f};
  Int8Linear linear;
  constexpr int32_t kNarrow = kernels::int8::kNarrowCodes;
  Status s = linear.create(w.data(), scale.data(), nullptr, 3, 2, false, kNarrow);
  CHECK(s.code() == StatusCode::kInvalidModel);
  CHECK(std::string(s.message()).find("-128") != std::string::npos);
  const std::vector<int8_t> good = {1, -2, 3, 4, -127, 6};
  for (float bad : {-1.0f, NAN, INFINITY}) {
    const std::vector<float> bad_scale = {0.5f, bad};
    s = linear.create(good.data(), bad_scale.data(), nullptr, 3, 2, false, kNarrow);
    CHECK(s.code() == StatusCode::kInvalidModel);
  }
  for (int32_t bad_limit : {0, 63, 100, 128}) {  // only the two code ranges the kernels know
    s = linear.create(good.data(), scale.data(), nullptr, 3, 2, false, bad_limit);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()).find("code limit") != std::string::npos);
  }
  REQUIRE(linear.create(good.data(), scale.data(), nullptr, 3, 2, false, kNarrow).is_ok());
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<float> y(4);
  Scratch small(1, 3);
  CHECK(linear.run(x.data(), 2, y.data(), nullptr, small.view).code() == StatusCode::kFailedPrecondition);
  Scratch narrow(2, 2);
  CHECK(linear.run(x.data(), 2, y.data(), nullptr, narrow.view).code() == StatusCode::kFailedPrecondition);
  Scratch fits(2, 3);
  CHECK(linear.run(x.data(), 2, y.data(), nullptr, fits.view).is_ok());
  // Through Linear: an int8 Linear without scratch.
  Linear wrapped;
  REQUIRE(wrapped.create_int8(good.data(), scale.data(), nullptr, 3, 2, false).is_ok());
  CHECK(wrapped.run(x.data(), 2, y.data(), nullptr).code() == StatusCode::kFailedPrecondition);
  CHECK(wrapped.run(x.data(), 2, y.data(), nullptr, &fits.view).is_ok());
  // rows == 0 is a no-op, with or without scratch.
  CHECK(wrapped.run(nullptr, 0, y.data(), nullptr).is_ok());
}

TEST_CASE("layers/int8_linear: an input multiplier quantizes x·m (smoothed int8 files)") {
  // The reference: the naive GEMM on the rows x·m made first, in float32.
  Random rng(23);
  for (size_t in : {size_t{5}, size_t{64}, size_t{257}}) {
    const size_t out = 40;
    const testing::QuantizedWeights w = testing::random_int8_weights(rng, out, in);
    const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
    std::vector<float> m(in);
    for (float& v : m) v = std::exp(rng.normal(0.0f, 1.0f));
    Linear linear;
    REQUIRE(linear.create_int8(w.q.data(), w.scale.data(), b.data(), in, out, false, m.data()).is_ok());
    Scratch scratch(9, in);
    for (size_t rows : {size_t{1}, size_t{9}}) {
      std::vector<float> x = rng.normal_vector(rows * in, 0.0f, 1.0f);
      x[in / 2] = 30.0f;  // an outlier
      std::vector<float> product(x.size());
      for (size_t r = 0; r < rows; ++r) {
        for (size_t k = 0; k < in; ++k) product[r * in + k] = x[r * in + k] * m[k];
      }
      std::vector<float> y(rows * out, NAN);
      REQUIRE(linear.run(x.data(), rows, y.data(), nullptr, &scratch.view).is_ok());
      const auto want = testing::reference_int8_gemm(
          testing::reference_quantize_rows(product, rows, in, kernels::int8::kFullCodes), rows, in,
          w.q, w.scale, b.data(), out, false);
      CAPTURE(in);
      CAPTURE(rows);
      CHECK(testing::same_bits(y.data(), want.data(), y.size()));
    }
  }
  // All ones is no multiplier; zero, negative and non-finite values are refused.
  const std::vector<int8_t> q = {1, -2, 3, 4, -5, 6};
  const std::vector<float> scale = {0.5f, 0.25f};
  Int8Linear linear;
  REQUIRE(linear.create(q.data(), scale.data(), nullptr, 3, 2, false, kernels::int8::kFullCodes).is_ok());
  const std::vector<float> ones = {1.0f, 1.0f, 1.0f};
  REQUIRE(linear.set_input_multiplier(ones.data()).is_ok());
  CHECK(linear.input_multiplier() == nullptr);
  for (float bad : {0.0f, -1.0f, NAN, INFINITY}) {
    const std::vector<float> m = {1.0f, bad, 2.0f};
    const Status s = linear.set_input_multiplier(m.data());
    CAPTURE(bad);
    CHECK(s.code() == StatusCode::kInvalidModel);
    CHECK(std::string(s.message()).find("multiplier 1") != std::string::npos);
  }
}

TEST_CASE("layers/int8_linear: an all-zero weight row and an all-zero input row give the bias") {
  const std::vector<int8_t> w = {0, 0, 0, 5, -7, 9};  // row 0 all zero (scale 0)
  const std::vector<float> scale = {0.0f, 0.125f};
  const std::vector<float> bias = {1.5f, -2.0f};
  const std::vector<float> x = {0, 0, 0, 1, 2, 3};  // row 0 all zero
  for (int32_t limit : {kernels::int8::kFullCodes, kernels::int8::kNarrowCodes}) {
    Int8Linear linear;
    REQUIRE(linear.create(w.data(), scale.data(), bias.data(), 3, 2, false, limit).is_ok());
    std::vector<float> y(4);
    Scratch scratch(2, 3);
    REQUIRE(linear.run(x.data(), 2, y.data(), nullptr, scratch.view).is_ok());
    CAPTURE(limit);
    CHECK(y[0] == 1.5f);
    CHECK(y[1] == -2.0f);
    CHECK(y[2] == 1.5f);
    if (limit == kernels::int8::kFullCodes) {
      // x row 1 quantizes to {42, 85, 127} (3 -> 127, ties none), scale 3/127:
      // Σ q·w = 42·5 - 85·7 + 127·9 = 758.
      CHECK(y[3] == 758.0f * ((3.0f / 127.0f) * 0.125f) + -2.0f);
    } else {
      // narrow: {21, 43, 64} (21.33, 42.67), scale 3/64:
      // Σ q·w = 21·5 - 43·7 + 64·9 = 380.
      CHECK(y[3] == 380.0f * ((3.0f / 64.0f) * 0.125f) + -2.0f);
    }
  }
}

}  // namespace
}  // namespace edgemt
