// Int8PerRowDynamic kernels (kernels/int8_gemm.h) against naive references:
// the packed layout, per-row activation quantization (scales, ties to even,
// saturation, zero and non-finite rows), every GEMM kernel this CPU runs bit
// for bit against an exact integer GEMM, block ranges, and the error of the
// whole int8 product against the float product it approximates.
#include "kernels/int8_gemm.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <cstring>
#include <vector>

#include "support/int8_reference.h"
#include "support/kernel_testing.h"

namespace edgemt::kernels::int8 {
namespace {

using testing::Random;

using testing::PackStorage;

TEST_CASE("kernels/int8: pack_weights lays out 16-column blocks of 4-deep groups, zero padded") {
  const size_t columns = 20, depth = 6;  // 2 blocks, 2 groups (depth padded to 8)
  std::vector<int8_t> w(columns * depth);
  for (size_t n = 0; n < columns; ++n) {
    for (size_t k = 0; k < depth; ++k) w[n * depth + k] = static_cast<int8_t>((n * 7 + k * 3) % 255 - 127);
  }
  std::vector<float> scale(columns), bias(columns);
  for (size_t n = 0; n < columns; ++n) {
    scale[n] = 0.5f + static_cast<float>(n);
    bias[n] = -static_cast<float>(n);
  }
  PackStorage storage(packed_bytes(columns, depth));
  PackedWeights p;
  REQUIRE(pack_weights(w.data(), scale.data(), bias.data(), columns, depth, storage.aligned(), &p));
  CHECK(p.block_count == 2);
  CHECK(p.groups == 2);
  CHECK(p.columns == columns);
  CHECK(p.depth == depth);
  CHECK(reinterpret_cast<uintptr_t>(p.blocks) % 64 == 0);
  for (size_t b = 0; b < 2; ++b) {
    for (size_t g = 0; g < 2; ++g) {
      for (size_t c = 0; c < 16; ++c) {
        for (size_t j = 0; j < 4; ++j) {
          const size_t n = b * 16 + c, k = g * 4 + j;
          const int8_t want = n < columns && k < depth ? w[n * depth + k] : 0;
          CHECK(p.blocks[((b * 2 + g) * 16 + c) * 4 + j] == want);
        }
      }
    }
  }
  for (size_t n = 0; n < 32; ++n) {
    int32_t sum = 0;
    for (size_t k = 0; n < columns && k < depth; ++k) sum += w[n * depth + k];
    CHECK(p.column_sum[n] == sum);
    CHECK(p.scale[n] == (n < columns ? scale[n] : 0.0f));
    CHECK(p.bias[n] == (n < columns ? bias[n] : 0.0f));
  }
  PackedWeights no_bias;
  REQUIRE(pack_weights(w.data(), scale.data(), nullptr, columns, depth, storage.aligned(), &no_bias));
  for (size_t n = 0; n < 32; ++n) CHECK(no_bias.bias[n] == 0.0f);
}

TEST_CASE("kernels/int8: a pack's codes as rows and back, in place") {
  const size_t columns = 20, depth = 6;  // 2 blocks, 2 groups (depth padded to 8)
  std::vector<int8_t> w(columns * depth);
  for (size_t n = 0; n < columns; ++n) {
    for (size_t k = 0; k < depth; ++k) w[n * depth + k] = static_cast<int8_t>((n * 11 + k * 5) % 255 - 127);
  }
  const std::vector<float> scale(columns, 0.5f);
  PackStorage storage(packed_bytes(columns, depth));
  PackedWeights p;
  REQUIRE(pack_weights(w.data(), scale.data(), nullptr, columns, depth, storage.aligned(), &p));
  const std::vector<int8_t> pack(p.blocks, p.blocks + packed_bytes(columns, depth));
  int8_t* codes = static_cast<int8_t*>(storage.aligned());
  std::vector<int8_t> scratch(p.groups * kGroupBytes);
  pack_codes_to_rows(codes, p.block_count, p.groups, scratch.data());
  for (size_t n = 0; n < 32; ++n) {  // row n at n * 8: w's row, then zeros
    for (size_t k = 0; k < 8; ++k) {
      CAPTURE(n);
      CAPTURE(k);
      CHECK(codes[n * 8 + k] == (n < columns && k < depth ? w[n * depth + k] : 0));
    }
  }
  rows_to_pack_codes(codes, p.block_count, p.groups, scratch.data());
  // The same bytes as before, the scales, biases and sums after the codes too.
  CHECK(std::memcmp(codes, pack.data(), pack.size()) == 0);
}

TEST_CASE("kernels/int8: pack_weights rejects -128 (outside the symmetric range)") {
  std::vector<int8_t> w = {1, 2, 3, -128, 5};
  const std::vector<float> scale = {1.0f};
  PackStorage storage(packed_bytes(1, 5));
  PackedWeights p;
  CHECK_FALSE(pack_weights(w.data(), scale.data(), nullptr, 1, 5, storage.aligned(), &p));
  w[3] = -127;
  CHECK(pack_weights(w.data(), scale.data(), nullptr, 1, 5, storage.aligned(), &p));
  // A whole block of 16 columns (packed 16 rows at a time where the CPU
  // can): a -128 in a whole group or in the last, partial one.
  const size_t depth = 70;  // 17 whole groups and 2 bytes
  const std::vector<float> scales(16, 1.0f);
  PackStorage wide(packed_bytes(16, depth));
  for (size_t at : {size_t{5 * depth + 33}, size_t{15 * depth + 69}}) {
    CAPTURE(at);
    std::vector<int8_t> block(16 * depth, 7);
    CHECK(pack_weights(block.data(), scales.data(), nullptr, 16, depth, wide.aligned(), &p));
    block[at] = -128;
    CHECK_FALSE(pack_weights(block.data(), scales.data(), nullptr, 16, depth, wide.aligned(), &p));
  }
}

// A RowSource over a row-major matrix and its scales that records the
// blocks asked for.
struct CopyingSource {
  const int8_t* wq;
  const float* scale;
  size_t depth;
  std::vector<size_t> firsts;
  static void rows(void* context, size_t first, size_t count, int8_t* out, float* scale_out) {
    CopyingSource& s = *static_cast<CopyingSource*>(context);
    s.firsts.push_back(first);
    std::memcpy(out, s.wq + first * s.depth, count * s.depth);
    std::memcpy(scale_out, s.scale + first, count * sizeof(float));
  }
};

TEST_CASE("kernels/int8: pack_weights_from rows on demand gives pack_weights' bytes") {
  for (size_t columns : {size_t{1}, size_t{16}, size_t{37}}) {
    for (size_t depth : {size_t{3}, size_t{8}, size_t{13}}) {
      CAPTURE(columns);
      CAPTURE(depth);
      std::vector<int8_t> w(columns * depth);
      for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 37) % 255 - 127);
      std::vector<float> scale(columns), bias(columns);
      for (size_t n = 0; n < columns; ++n) {
        scale[n] = 0.25f * static_cast<float>(n + 1);
        bias[n] = 1.0f - static_cast<float>(n);
      }
      const size_t bytes = packed_bytes(columns, depth);
      PackStorage whole(bytes), on_demand(bytes);
      std::memset(whole.aligned(), 0x5a, bytes);
      std::memset(on_demand.aligned(), 0xa5, bytes);  // every byte must be written
      PackedWeights a, b;
      REQUIRE(pack_weights(w.data(), scale.data(), bias.data(), columns, depth, whole.aligned(), &a));
      CopyingSource source{w.data(), scale.data(), depth, {}};
      std::vector<int8_t> rows(16 * depth);
      std::vector<float> made(columns, -1.0f);  // the scales, as the source writes them
      REQUIRE(pack_weights_from(&CopyingSource::rows, &source, made.data(), bias.data(), columns,
                                depth, rows.data(), on_demand.aligned(), &b));
      CHECK(made == scale);
      CHECK(std::memcmp(whole.aligned(), on_demand.aligned(), bytes) == 0);
      CHECK(b.block_count == a.block_count);
      CHECK(b.groups == a.groups);
      std::vector<size_t> want;
      for (size_t first = 0; first < columns; first += 16) want.push_back(first);
      CHECK(source.firsts == want);  // each block once, in order
    }
  }
  std::vector<int8_t> bad = {1, 2, 3, -128, 5};
  const std::vector<float> one = {1.0f};
  CopyingSource source{bad.data(), one.data(), 5, {}};
  std::vector<int8_t> rows(16 * 5);
  std::vector<float> made(1);
  PackStorage storage(packed_bytes(1, 5));
  PackedWeights p;
  CHECK_FALSE(pack_weights_from(&CopyingSource::rows, &source, made.data(), nullptr, 1, 5,
                                rows.data(), storage.aligned(), &p));
}

TEST_CASE("kernels/int8: quantize_rows matches the reference on random rows of any depth") {
  Random rng(5);
  for (int32_t limit : {kFullCodes, kNarrowCodes}) {
  for (size_t depth : {size_t{1}, size_t{3}, size_t{4}, size_t{17}, size_t{256}, size_t{1023}}) {
    const size_t rows = 6;
    std::vector<float> x = rng.normal_vector(rows * depth, 0.0f, 3.0f);
    const testing::QuantizedRows want = testing::reference_quantize_rows(x, rows, depth, limit);
    std::vector<int8_t> q(rows * padded_depth(depth), 99);
    std::vector<float> scale(rows, -1.0f);
    quantize_rows(x.data(), rows, depth, depth, limit, nullptr, q.data(), scale.data());
    CAPTURE(limit);
    CAPTURE(depth);
    int32_t largest = 0;
    for (int8_t code : q) largest = std::max(largest, std::abs(static_cast<int32_t>(code)));
    CHECK(largest == limit);  // max|x| maps to the limit
    CHECK(q == want.q);
    CHECK(testing::same_bits(scale.data(), want.scale.data(), rows));
    // Round to nearest: |x - q·scale| <= scale/2 (plus the float rounding of
    // x·(127/max), well under a part in 10^6 of the scale).
    bool within = true;
    for (size_t m = 0; m < rows; ++m) {
      for (size_t k = 0; k < depth; ++k) {
        const double err = std::fabs(static_cast<double>(x[m * depth + k]) -
                                     static_cast<double>(q[m * padded_depth(depth) + k]) * static_cast<double>(scale[m]));
        within = within && err <= 0.5 * static_cast<double>(scale[m]) * (1.0 + 1e-5);
      }
    }
    CHECK(within);
  }
  }
}

TEST_CASE("kernels/int8: quantize_tensor gives every row the whole tensor's range") {
  Random rng(8);
  for (size_t depth : {size_t{1}, size_t{5}, size_t{64}, size_t{257}}) {
    const size_t rows = 7;
    std::vector<float> x = rng.normal_vector(rows * depth, 0.0f, 2.0f);
    x[3 % (rows * depth)] = 40.0f;  // one large value sets every row's scale
    const testing::QuantizedRows want = testing::reference_quantize_tensor(x, rows, depth, kFullCodes);
    std::vector<int8_t> q(rows * padded_depth(depth), 99);
    std::vector<float> scale(rows, -1.0f);
    quantize_tensor(x.data(), rows, depth, depth, kFullCodes, nullptr, q.data(), scale.data());
    CAPTURE(depth);
    CHECK(q == want.q);
    CHECK(testing::same_bits(scale.data(), want.scale.data(), rows));
    for (float s : scale) CHECK(s == 40.0f / 127.0f);
  }
  // A stride wider than the depth, and a multiplier: the products' range.
  const std::vector<float> x = {1.0f, -2.0f, 99.0f, 0.5f, 4.0f, 99.0f};
  const std::vector<float> m = {2.0f, 0.25f};
  std::vector<int8_t> q(8, 99);
  std::vector<float> scale(2, -1.0f);
  quantize_tensor(x.data(), 2, 2, 3, kFullCodes, m.data(), q.data(), scale.data());
  CHECK(scale[0] == 2.0f / 127.0f);  // max|x·m| = |1·2| = 2
  CHECK(scale[1] == 2.0f / 127.0f);
  CHECK(q == std::vector<int8_t>{127, -32, 0, 0, 64, 64, 0, 0});  // -0.5 and 1: -31.75, 63.5
  // All-zero rows beside a non-zero one keep the tensor's scale and zeros;
  // a non-finite value anywhere makes every row NaN.
  const std::vector<float> z = {0.0f, 0.0f, 0.0f, 3.0f};
  quantize_tensor(z.data(), 2, 2, 2, kFullCodes, nullptr, q.data(), scale.data());
  CHECK(scale[0] == 3.0f / 127.0f);
  CHECK(q[0] == 0);
  CHECK(q[5] == 127);
  const std::vector<float> n = {1.0f, 2.0f, NAN, 1.0f};
  quantize_tensor(n.data(), 2, 2, 2, kFullCodes, nullptr, q.data(), scale.data());
  CHECK(std::isnan(scale[0]));
  CHECK(std::isnan(scale[1]));
}

TEST_CASE("kernels/int8: quantize_fixed quantizes with the given multiplier, saturating") {
  Random rng(9);
  for (size_t depth : {size_t{1}, size_t{5}, size_t{64}, size_t{257}}) {
    const size_t rows = 6;
    std::vector<float> x = rng.normal_vector(rows * depth, 0.0f, 2.0f);
    const size_t far = 3 % (rows * depth);       // row 3 or 0
    x[far] = 1e30f;                              // far beyond the range: +127
    x[(rows - 1) * depth] = -3.5f;               // -3.5 · 20 = -70: exact
    x[(rows - 2) * depth] = NAN;                 // that row: scale NaN, zeros
    const float inverse = 20.0f;                 // codes reach ±127 at ±6.35
    const testing::QuantizedRows want = testing::reference_quantize_fixed(x, rows, depth, kFullCodes, inverse);
    std::vector<int8_t> q(rows * padded_depth(depth), 99);
    std::vector<float> scale(rows, -1.0f);
    quantize_fixed(x.data(), rows, depth, depth, kFullCodes, nullptr, inverse, q.data(), scale.data());
    CAPTURE(depth);
    CHECK(q == want.q);
    CHECK(testing::same_bits(scale.data(), want.scale.data(), rows));
    CHECK(q[far / depth * padded_depth(depth) + far % depth] == 127);
    CHECK(q[(rows - 1) * padded_depth(depth)] == -70);
    CHECK(scale[far / depth] == 1.0f);
    CHECK(std::isnan(scale[rows - 2]));
  }
  // Ties to even: 0.125 · 20 = 2.5 -> 2, 0.175 · 20 = 3.5 -> 4; a multiplier.
  const std::vector<float> x = {0.125f, 0.175f, -0.125f, 9.0f};
  const std::vector<float> m = {1.0f, 1.0f, 1.0f, 0.5f};
  std::vector<int8_t> q(4, 99);
  std::vector<float> scale(1, -1.0f);
  quantize_fixed(x.data(), 1, 4, 4, kFullCodes, m.data(), 20.0f, q.data(), scale.data());
  CHECK(q == std::vector<int8_t>{2, 4, -2, 90});
}

TEST_CASE("kernels/int8: quantize_rows maps max|x| to +-127, rounds ties to even, pads zeros") {
  // max 127 gives 127/max = 1 exactly: q is x rounded, ties to even.
  const std::vector<float> x = {127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f, -3.5f};
  std::vector<int8_t> q(8, 99);
  float scale = 0;
  quantize_rows(x.data(), 1, x.size(), x.size(), kFullCodes, nullptr, q.data(), &scale);
  CHECK(scale == 1.0f);
  CHECK(q == std::vector<int8_t>{127, 0, 2, 2, 0, -2, -4, 0});
  // The negative extreme maps to -127, never -128.
  const std::vector<float> y = {-3.0f, 1.5f, 0.75f};
  std::vector<int8_t> r(4, 99);
  quantize_rows(y.data(), 1, 3, 3, kFullCodes, nullptr, r.data(), &scale);
  CHECK(scale == 3.0f / 127.0f);
  CHECK(r[0] == -127);
  CHECK(r[1] == 64);   // 1.5 · 127/3 = 63.5: tie, to even
  CHECK(r[2] == 32);   // 31.75
  CHECK(r[3] == 0);
}

TEST_CASE("kernels/int8: quantize_rows with narrow codes maps max|x| to +-64, rounds ties to even") {
  // max 64 gives 64/max = 1 exactly: q is x rounded, ties to even.
  const std::vector<float> x = {-64.0f, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 63.5f};
  std::vector<int8_t> q(8, 99);
  float scale = 0;
  quantize_rows(x.data(), 1, x.size(), x.size(), kNarrowCodes, nullptr, q.data(), &scale);
  CHECK(scale == 1.0f);
  CHECK(q == std::vector<int8_t>{-64, 0, 2, 2, 0, -2, 64, 0});
  const std::vector<float> y = {3.0f, -1.5f, 0.75f, 0.1171875f};
  std::vector<int8_t> r(4, 99);
  quantize_rows(y.data(), 1, 4, 4, kNarrowCodes, nullptr, r.data(), &scale);
  CHECK(scale == 3.0f / 64.0f);
  CHECK(r == std::vector<int8_t>{64, -32, 16, 2});  // 0.1171875 · 64/3 = 2.5: tie, to even
}

TEST_CASE("kernels/int8: quantize_rows - all-zero row gets scale 0, a non-finite row NaN") {
  const std::vector<float> x = {0.0f, -0.0f, 0.0f,  1.0f, INFINITY, 2.0f,  NAN, 1.0f, 0.0f,  4.0f, 2.0f, -1.0f};
  std::vector<int8_t> q(16, 99);
  std::vector<float> scale(4, -1.0f);
  quantize_rows(x.data(), 4, 3, 3, kFullCodes, nullptr, q.data(), scale.data());
  CHECK(scale[0] == 0.0f);
  CHECK(std::isnan(scale[1]));
  CHECK(std::isnan(scale[2]));
  CHECK(scale[3] == 4.0f / 127.0f);
  for (size_t i = 0; i < 12; ++i) CHECK(q[i] == 0);
  CHECK(q[12] == 127);
  CHECK(q[13] == 64);  // 63.5, tie to even
  CHECK(q[14] == -32);  // -31.75
}

TEST_CASE("kernels/int8: quantize_rows - a row too small for 127 / max|x| is a zero row, not 0 * inf") {
  // Found by the model_file fuzzer: a subnormal max|x| made 127 / max|x| inf,
  // 0 · inf NaN, and the NaN's cast to int an undefined conversion.
  const std::vector<float> x = {0.0f, 1e-39f, -0.0f,  -1e-45f, 0.0f, 0.0f,  3e-37f, 1e-38f, 0.0f,
                                0.0f, 4e-37f, -1e-37f};
  std::vector<int8_t> q(16, 99);
  std::vector<float> scale(4, -1.0f);
  quantize_rows(x.data(), 4, 3, 3, kFullCodes, nullptr, q.data(), scale.data());
  CHECK(scale[0] == 0.0f);  // subnormal
  CHECK(scale[1] == 0.0f);  // the smallest subnormal
  CHECK(scale[2] == 0.0f);  // normal, still below 127 / FLT_MAX
  for (size_t i = 0; i < 12; ++i) CHECK(q[i] == 0);
  CHECK(scale[3] == 4e-37f / 127.0f);  // just above: quantized as usual
  CHECK(q[12] == 0);
  CHECK(q[13] == 127);
  CHECK(q[14] == -32);  // -31.75
}

TEST_CASE("kernels/int8: quantize_rows reads rows with a stride wider than the depth") {
  const std::vector<float> x = {1.0f, -2.0f, 555.0f,  4.0f, 2.0f, 555.0f};
  std::vector<int8_t> q(8, 99);
  std::vector<float> scale(2);
  quantize_rows(x.data(), 2, 2, 3, kFullCodes, nullptr, q.data(), scale.data());
  CHECK(scale[0] == 2.0f / 127.0f);
  CHECK(scale[1] == 4.0f / 127.0f);
  CHECK(q == std::vector<int8_t>{64, -127, 0, 0, 127, 64, 0, 0});
}

TEST_CASE("kernels/int8: every variant's activation quantizers give the portable ones' bits") {
  Random rng(6);
  GemmVariant kernels[8];
  const size_t count = available_gemm_kernels(kernels, 8);
  for (int32_t limit : {kFullCodes, kNarrowCodes}) {
  for (size_t depth : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{40}, size_t{256}, size_t{1023}}) {
    // Rows packed, then rows with a gap after each whose 1e6 must not be read.
    for (size_t gap : {size_t{0}, size_t{7}}) {
      const size_t rows = 7;
      const size_t x_stride = depth + gap;
      std::vector<float> x(rows * x_stride, 1e6f);
      for (size_t m = 0; m < rows; ++m) {
        for (size_t k = 0; k < depth; ++k) x[m * x_stride + k] = rng.normal(0.0f, 3.0f);
      }
      for (size_t k = 0; k < depth; ++k) x[k] = 0.0f;                  // row 0: all zero
      x[x_stride + depth / 2] = NAN;                                   // row 1: NaN
      x[2 * x_stride] = -INFINITY;                                     // row 2: -inf
      for (size_t k = 0; k < depth; ++k) {
        x[3 * x_stride + k] = std::round(x[3 * x_stride + k]);         // row 3: ties
        x[4 * x_stride + k] *= 1e-40f;                                 // row 4: subnormal
      }
      std::vector<int8_t> want(rows * padded_depth(depth), 99);
      std::vector<float> want_scale(rows, -1.0f);
      quantize_rows(x.data(), rows, depth, x_stride, limit, nullptr, want.data(), want_scale.data());
      CHECK(want_scale[5] < 1.0f);  // normal(0, 3) values, not the gap's
      for (size_t i = 0; i < count; ++i) {
        std::vector<int8_t> q(want.size(), 99);
        std::vector<float> scale(rows, -1.0f);
        kernels[i].quantize(x.data(), rows, depth, x_stride, limit, nullptr, q.data(), scale.data());
        CAPTURE(std::string(kernels[i].name));
        CAPTURE(limit);
        CAPTURE(depth);
        CAPTURE(gap);
        CHECK(q == want);
        CHECK(testing::same_bits(scale.data(), want_scale.data(), rows));
      }
      // quantize_tensor: every row (a NaN among them: scale NaN everywhere),
      // and the finite rows 3.. (ties, subnormals and normal rows).
      for (size_t first : {size_t{0}, size_t{3}}) {
        const float* tensor = x.data() + first * x_stride;
        const size_t n = rows - first;
        std::vector<int8_t> want_t(n * padded_depth(depth), 99);
        std::vector<float> want_t_scale(n, -1.0f);
        quantize_tensor(tensor, n, depth, x_stride, limit, nullptr, want_t.data(), want_t_scale.data());
        for (size_t i = 0; i < count; ++i) {
          std::vector<int8_t> q(want_t.size(), 99);
          std::vector<float> scale(n, -1.0f);
          kernels[i].quantize_tensor(tensor, n, depth, x_stride, limit, nullptr, q.data(), scale.data());
          CAPTURE(std::string(kernels[i].name));
          CAPTURE(first);
          CHECK(q == want_t);
          CHECK(testing::same_bits(scale.data(), want_t_scale.data(), n));
        }
      }
      // quantize_fixed: a range that saturates the larger values.
      for (float inverse : {1.0f, 40.0f}) {
        std::vector<int8_t> want_f(want.size(), 99);
        std::vector<float> want_f_scale(rows, -1.0f);
        quantize_fixed(x.data(), rows, depth, x_stride, limit, nullptr, inverse, want_f.data(),
                       want_f_scale.data());
        for (size_t i = 0; i < count; ++i) {
          std::vector<int8_t> q(want_f.size(), 99);
          std::vector<float> scale(rows, -1.0f);
          kernels[i].quantize_fixed(x.data(), rows, depth, x_stride, limit, nullptr, inverse,
                                    q.data(), scale.data());
          CAPTURE(std::string(kernels[i].name));
          CAPTURE(inverse);
          CHECK(q == want_f);
          CHECK(testing::same_bits(scale.data(), want_f_scale.data(), rows));
        }
      }
    }
  }
  }
}

TEST_CASE("kernels/int8: an input multiplier quantizes x·m, with the same bits in every variant") {
  // The smoothing vector of a smoothed int8 file (schema/TENSORS.md): each
  // variant must quantize the float32 products x[m, k]·multiplier[k], which
  // the naive reference (written from the definition) gets from x·m made
  // first; and the special rows (zero, NaN, inf, tiny) stay special.
  Random rng(16);
  GemmVariant kernels[8];
  const size_t count = available_gemm_kernels(kernels, 8);
  for (size_t depth : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{40}, size_t{257}, size_t{1024}}) {
    const size_t rows = 6;
    std::vector<float> x(rows * depth), multiplier(depth), product(rows * depth);
    for (float& v : x) v = rng.normal(0.0f, 2.0f);
    for (size_t k = 0; k < depth; ++k) multiplier[k] = std::exp(rng.normal(0.0f, 1.5f));  // 1/20..20
    x[depth / 3] = 40.0f;                            // row 0: an outlier channel
    for (size_t k = 0; k < depth; ++k) x[depth + k] = 0.0f;  // row 1: all zero
    x[2 * depth + depth / 2] = NAN;                  // row 2: NaN
    for (size_t k = 0; k < depth; ++k) x[3 * depth + k] *= 1e-39f;  // row 3: tiny
    for (size_t m = 0; m < rows; ++m) {
      for (size_t k = 0; k < depth; ++k) product[m * depth + k] = x[m * depth + k] * multiplier[k];
    }
    for (int32_t limit : {kFullCodes, kNarrowCodes}) {
      const testing::QuantizedRows want = testing::reference_quantize_rows(product, rows, depth, limit);
      for (size_t i = 0; i < count; ++i) {
        std::vector<int8_t> q(want.q.size(), 99);
        std::vector<float> scale(rows, -1.0f);
        kernels[i].quantize(x.data(), rows, depth, depth, limit, multiplier.data(), q.data(), scale.data());
        CAPTURE(std::string(kernels[i].name));
        CAPTURE(depth);
        CAPTURE(limit);
        for (size_t m = 0; m < rows; ++m) {
          if (m == 2) {
            CHECK(std::isnan(scale[m]));
            continue;
          }
          CHECK(scale[m] == want.scale[m]);
          CHECK(std::equal(q.begin() + m * padded_depth(depth), q.begin() + (m + 1) * padded_depth(depth),
                           want.q.begin() + m * padded_depth(depth)));
        }
        // One range for rows 3.. (tiny and normal ones): their products' max.
        const std::vector<float> finite(product.begin() + 3 * depth, product.end());
        const testing::QuantizedRows whole =
            testing::reference_quantize_tensor(finite, rows - 3, depth, limit);
        std::vector<int8_t> qt(whole.q.size(), 99);
        std::vector<float> scale_t(rows - 3, -1.0f);
        kernels[i].quantize_tensor(x.data() + 3 * depth, rows - 3, depth, depth, limit,
                                   multiplier.data(), qt.data(), scale_t.data());
        CHECK(qt == whole.q);
        CHECK(testing::same_bits(scale_t.data(), whole.scale.data(), rows - 3));
      }
    }
  }
}

TEST_CASE("kernels/int8: every GEMM kernel this CPU runs equals the exact integer reference") {
  GemmVariant kernels[8];
  const size_t count = available_gemm_kernels(kernels, 8);
  REQUIRE(count >= 1);
  CHECK(std::string(kernels[count - 1].name) == "portable");
  CHECK(std::string(best_gemm_kernel().name) == kernels[0].name);
  for (size_t i = 0; i < count; ++i) {
    MESSAGE("int8 GEMM kernel: " << std::string(kernels[i].name));
    testing::check_gemm_kernel_against_reference(kernels[i].kernel, kernels[i].name, kFullCodes);
    testing::check_gemm_kernel_against_reference(kernels[i].kernel, kernels[i].name, kNarrowCodes);
    // Marian's shifted sums (Int8PerTensorStatic), and a shift with the
    // AVX2 kernel's narrow-code offset.
    testing::check_gemm_kernel_against_reference(kernels[i].kernel, kernels[i].name, kFullCodes, 127);
    testing::check_gemm_kernel_against_reference(kernels[i].kernel, kernels[i].name, kNarrowCodes, 127);
  }
}

TEST_CASE("kernels/int8: a block range writes only its columns") {
  Random rng(9);
  const size_t columns = 70, depth = 40, rows = 3;  // 5 blocks
  const testing::QuantizedWeights w = testing::random_int8_weights(rng, columns, depth);
  PackStorage storage(packed_bytes(columns, depth));
  PackedWeights p;
  REQUIRE(pack_weights(w.q.data(), w.scale.data(), nullptr, columns, depth, storage.aligned(), &p));
  const std::vector<float> x = rng.normal_vector(rows * depth, 0.0f, 1.0f);
  const testing::QuantizedRows xq = testing::reference_quantize_rows(x, rows, depth, kNarrowCodes);
  const std::vector<float> want =
      testing::reference_int8_gemm(xq, rows, depth, w.q, w.scale, nullptr, columns, false);
  GemmVariant kernels[8];
  const size_t count = available_gemm_kernels(kernels, 8);
  for (size_t i = 0; i < count; ++i) {
    std::vector<float> y(rows * columns, -7.0f);
    GemmArgs args{xq.q.data(), padded_depth(depth), xq.scale.data(), rows, &p, y.data(), columns, false,
                  kNarrowCodes};
    kernels[i].kernel(args, 1, 2);  // blocks 1 and 2: columns [16, 48)
    bool ok = true;
    for (size_t m = 0; m < rows; ++m) {
      for (size_t n = 0; n < columns; ++n) {
        const bool inside = n >= 16 && n < 48;
        ok = ok && (inside ? y[m * columns + n] == want[m * columns + n] : y[m * columns + n] == -7.0f);
      }
    }
    CAPTURE(kernels[i].name);
    CHECK(ok);
  }
}

TEST_CASE("kernels/int8: the int8 product stays within the quantization error of the float product") {
  // Weights w = q·s exactly (they are what the file means); the only error is
  // the activations' rounding, at most scale/2 per element:
  //   |y - x·wᵀ| <= Σ_k |w[n,k]| · x_scale/2 (+ float rounding).
  Random rng(77);
  const size_t rows = 5, columns = 37, depth = 300;
  const testing::QuantizedWeights w = testing::random_int8_weights(rng, columns, depth);
  PackStorage storage(packed_bytes(columns, depth));
  PackedWeights p;
  REQUIRE(pack_weights(w.q.data(), w.scale.data(), nullptr, columns, depth, storage.aligned(), &p));
  const std::vector<float> x = rng.normal_vector(rows * depth, 0.0f, 1.0f);
  for (int32_t limit : {kFullCodes, kNarrowCodes}) {
  std::vector<int8_t> xq(rows * padded_depth(depth));
  std::vector<float> x_scale(rows);
  quantize_rows(x.data(), rows, depth, depth, limit, nullptr, xq.data(), x_scale.data());
  std::vector<float> y(rows * columns);
  GemmArgs args{xq.data(), padded_depth(depth), x_scale.data(), rows, &p, y.data(), columns, false,
                limit};
  best_gemm_kernel().kernel(args, 0, p.block_count);
  bool within = true;
  double worst = 0;
  for (size_t m = 0; m < rows; ++m) {
    for (size_t n = 0; n < columns; ++n) {
      double exact = 0, bound = 0;
      for (size_t k = 0; k < depth; ++k) {
        const double wk = static_cast<double>(w.q[n * depth + k]) * static_cast<double>(w.scale[n]);
        exact += static_cast<double>(x[m * depth + k]) * wk;
        bound += std::fabs(wk) * 0.5 * static_cast<double>(x_scale[m]);
      }
      const double err = std::fabs(static_cast<double>(y[m * columns + n]) - exact);
      worst = std::fmax(worst, err / bound);
      within = within && err <= bound * 1.001 + 1e-6 * std::fabs(exact);
    }
  }
  MESSAGE("codes +-" << limit << ": worst error / bound = " << worst);
  CHECK(within);
  }
}

}  // namespace
}  // namespace edgemt::kernels::int8
