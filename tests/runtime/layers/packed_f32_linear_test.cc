// PackedF32Linear (through Linear::create_packed_f32) against the same
// matrix on XNNPACK: the same bits at every row count, alone and on a pool;
// packed from rows read in place a part at a time, the same pack; skipped where this CPU has no fast own kernel (x86 without AVX2 and FMA3).
#include "layers/packed_f32_linear.h"

#include <doctest/doctest.h>

#include <xnnpack.h>

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "core/xnnpack_runtime.h"
#include "kernels/f32_gemm.h"
#include "kernels/f32_gemm_sparse.h"
#include "layers/linear.h"
#include "support/kernel_testing.h"
#include "support/thread_pool.h"

namespace edgemt {
namespace {

using testing::Pool;
using testing::Random;

// XNNPACK may read XNN_EXTRA_BYTES past the input.
constexpr size_t kPadFloats = XNN_EXTRA_BYTES / sizeof(float) + 16;

}  // namespace
}  // namespace edgemt

namespace edgemt {
namespace {

TEST_CASE("layers/packed_f32_linear: a Linear on the own f32 GEMM gives XNNPACK's bits" * doctest::skip(kernels::f32::fast_gemm_kernel() == nullptr)) {
  // A tied output projection runs on the own f32 GEMM so that its pack also
  // serves the embedding rows; its logits must be the ones XNNPACK computed.
  REQUIRE(ensure_xnnpack_initialized().is_ok());
  Random rng(15);
  Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  const Parallel always(pool.get(), 0);
  for (size_t out : {size_t{7}, size_t{300}, size_t{1037}, size_t{8000}}) {
    for (size_t in : {size_t{1}, size_t{64}, size_t{257}, size_t{512}}) {
      const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.5f);
      const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
      Linear xnnpack, own;
      REQUIRE(xnnpack.create(w.data(), b.data(), in, out, false).is_ok());
      REQUIRE(own.create_packed_f32(w.data(), b.data(), in, out).is_ok());
      CHECK(own.is_packed_f32());
      for (size_t rows : {size_t{1}, size_t{3}, size_t{17}, size_t{128}}) {
        CAPTURE(out);
        CAPTURE(in);
        CAPTURE(rows);
        const std::vector<float> x = rng.normal_vector(rows * in + kPadFloats, 0.0f, 1.0f);
        std::vector<float> want(rows * out), got(rows * out), threaded(rows * out);
        REQUIRE(xnnpack.run(x.data(), rows, want.data(), nullptr).is_ok());
        REQUIRE(own.run(x.data(), rows, got.data(), nullptr).is_ok());
        REQUIRE(own.run(x.data(), rows, threaded.data(), always).is_ok());
        CHECK(testing::same_bits(want.data(), got.data(), want.size()));
        CHECK(testing::same_bits(want.data(), threaded.data(), want.size()));
      }
    }
  }
}

TEST_CASE("layers/packed_f32_linear: a ReLU's output as input (set_sparse_input): the same bits" *
          doctest::skip(kernels::f32::fast_gemm_kernel() == nullptr)) {
  // Inputs of 96% zeros take the zero-skipping kernel, 50% the dense one;
  // both must give the plain Linear's bits, alone and on a pool. run()
  // chooses from 16 rows evenly spaced (of 64: every fourth), so the third
  // pattern (96% zeros in those rows, 50% in the others) takes the
  // zero-skipping kernel for rows that are not sparse: the same bits too.
  Random rng(16);
  Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  const Parallel always(pool.get(), 0);
  for (size_t out : {size_t{96}, size_t{256}, size_t{300}}) {
    const size_t in = 1024;
    const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.5f);
    const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
    Linear plain, sparse;
    REQUIRE(plain.create_packed_f32(w.data(), b.data(), in, out).is_ok());
    REQUIRE(sparse.create_packed_f32(w.data(), b.data(), in, out).is_ok());
    CHECK(!plain.sparse_input());
    // On where a zero-skipping kernel goes with the fast one (x86,
    // portable); on NEON there is none, and both Linears are the same.
    const bool available = kernels::f32::sparse_gemm_kernel() != nullptr;
    CHECK(sparse.set_sparse_input() == available);
    CHECK(sparse.sparse_input() == available);
    for (int pattern = 0; pattern < 3; ++pattern) {
      for (size_t rows : {size_t{1}, size_t{5}, size_t{64}}) {
        CAPTURE(out);
        CAPTURE(pattern);
        CAPTURE(rows);
        std::vector<float> x = rng.normal_vector(rows * in + kPadFloats, 0.0f, 1.0f);
        for (size_t i = 0; i < x.size(); ++i) {
          const bool counted_row = (i / in) % 4 == 0;
          const size_t zeros_in_100 = pattern == 0 || (pattern == 2 && counted_row) ? 96 : 50;
          x[i] = rng.index(0, 99) < zeros_in_100 ? 0.0f : x[i];
        }
        std::vector<float> want(rows * out), got(rows * out), threaded(rows * out);
        REQUIRE(plain.run(x.data(), rows, want.data(), nullptr).is_ok());
        REQUIRE(sparse.run(x.data(), rows, got.data(), nullptr).is_ok());
        REQUIRE(sparse.run(x.data(), rows, threaded.data(), always).is_ok());
        CHECK(testing::same_bits(want.data(), got.data(), want.size()));
        CHECK(testing::same_bits(want.data(), threaded.data(), want.size()));
      }
    }
  }
  // A weight that is not finite: 0 · inf must still make its NaN.
  std::vector<float> w = rng.normal_vector(16 * 8, 0.0f, 0.5f);
  w[5] = INFINITY;
  Linear with_inf;
  REQUIRE(with_inf.create_packed_f32(w.data(), nullptr, 8, 16).is_ok());
  CHECK(!with_inf.set_sparse_input());
  CHECK(!with_inf.sparse_input());
}

TEST_CASE("layers/packed_f32_linear: with and without a fused ReLU, XNNPACK's clamp: NaN and -0 sums" *
          doctest::skip(!kernels::f32::replaces_xnnpack())) {
  // Where the own GEMM replaces XNNPACK for every matrix, FFN input
  // projections with their fused ReLU run on it. Columns: a NaN weight
  // (NaN sums), a -0 weight with bias -0 (-0 sums for x > 0), then random.
  REQUIRE(ensure_xnnpack_initialized().is_ok());
  Random rng(16);
  for (size_t out : {size_t{3}, size_t{37}, size_t{1024}}) {
    for (size_t in : {size_t{1}, size_t{256}}) {
      std::vector<float> w = rng.normal_vector(out * in, 0.0f, 0.5f);
      std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
      w[0] = NAN;
      for (size_t k = 0; k < in; ++k) w[in + k] = -0.0f;
      b[1] = -0.0f;
      for (bool relu : {false, true}) {
        Linear xnnpack, own;
        REQUIRE(xnnpack.create(w.data(), b.data(), in, out, relu).is_ok());
        REQUIRE(own.create_packed_f32(w.data(), b.data(), in, out, relu).is_ok());
        for (size_t rows : {size_t{1}, size_t{5}, size_t{64}}) {
          CAPTURE(relu);
          CAPTURE(out);
          CAPTURE(in);
          CAPTURE(rows);
          std::vector<float> x = rng.normal_vector(rows * in + kPadFloats, 0.0f, 1.0f);
          for (float& v : x) v = std::fabs(v);
          std::vector<float> want(rows * out), got(rows * out);
          REQUIRE(xnnpack.run(x.data(), rows, want.data(), nullptr).is_ok());
          REQUIRE(own.run(x.data(), rows, got.data(), nullptr).is_ok());
          CHECK(testing::same_bits(want.data(), got.data(), want.size()));
        }
      }
    }
  }
}

}  // namespace
}  // namespace edgemt

namespace edgemt {
namespace {

// What a release callback was told: the rows it covered, in order.
struct Released {
  const float* weight = nullptr;
  size_t in = 0;
  std::vector<std::pair<size_t, size_t>> parts;  // [first row, row count]
};

void record_release(const void* context, const float* rows, size_t floats) {
  Released& r = *const_cast<Released*>(static_cast<const Released*>(context));
  r.parts.emplace_back(static_cast<size_t>(rows - r.weight) / r.in, floats / r.in);
}

TEST_CASE("layers/packed_f32_linear: packed from rows a part at a time, the same pack" * doctest::skip(kernels::f32::fast_gemm_kernel() == nullptr)) {
  // 2100 rows: two whole parts of 1024 and a last one of 52 (not a whole
  // block); each part released once packed, every row exactly once.
  Random rng(16);
  const size_t in = 9, out = 2100;
  const std::vector<float> w = rng.normal_vector(out * in, 0.0f, 1.0f);
  const std::vector<float> b = rng.normal_vector(out, 0.0f, 1.0f);
  for (bool with_bias : {false, true}) {
    CAPTURE(with_bias);
    const float* bias = with_bias ? b.data() : nullptr;
    PackedF32Linear whole;
    REQUIRE(whole.create(w.data(), bias, in, out, false).is_ok());
    UnpackedF32Linear rows;
    REQUIRE(rows.create(w.data(), bias, in, out).is_ok());
    Released released{w.data(), in, {}};
    rows.set_release(&record_release, &released);
    PackedF32Linear parts;
    REQUIRE(parts.create(rows, false).is_ok());
    REQUIRE(parts.packed_bytes() == whole.packed_bytes());
    const kernels::f32::PackedWeights& a = whole.packed();
    const kernels::f32::PackedWeights& p = parts.packed();
    CHECK(p.columns == a.columns);
    CHECK(p.depth == a.depth);
    CHECK(p.block_count == a.block_count);
    CHECK(std::memcmp(p.blocks, a.blocks, a.block_count * in * kernels::f32::kBlockColumns * sizeof(float)) == 0);
    CHECK(std::memcmp(p.bias, a.bias, a.block_count * kernels::f32::kBlockColumns * sizeof(float)) == 0);
    const std::vector<std::pair<size_t, size_t>> expected = {{0, 1024}, {1024, 1024}, {2048, 52}};
    CHECK(released.parts == expected);
    CHECK(p.tiny == kernels::f32::TinyWeights::kNone);
  }
  // A tiny weight (nonzero, below 2^-65) in the last part only.
  std::vector<float> tiny_w = w;
  tiny_w[(out - 1) * in] = std::ldexp(1.0f, -70);
  PackedF32Linear tiny;
  REQUIRE(tiny.create(tiny_w.data(), nullptr, in, out, false).is_ok());
  CHECK(tiny.packed().tiny == kernels::f32::TinyWeights::kSome);
}

}  // namespace
}  // namespace edgemt
