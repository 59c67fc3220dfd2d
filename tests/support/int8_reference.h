// Naive int8 references for the Int8PerRowDynamic kernels (kernels/int8_gemm.h),
// written from the scheme's definition, independent of the packed layout:
// symmetric per-row quantization of activations and an exact integer GEMM on
// the file's [N, K] int8 weights followed by the scheme's float epilogue.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/int8_gemm.h"
#include "support/kernel_testing.h"

namespace edgemt::testing {

struct QuantizedRows {
  std::vector<int8_t> q;      // [rows, padded_depth(depth)]
  std::vector<float> scale;   // [rows]
};

// One row's codes: nearest (ties to even) of x · inverse, clamped to ±codes.
inline void round_row(const float* x, size_t depth, float codes, float inverse, int8_t* q) {
  for (size_t k = 0; k < depth; ++k) {
    const float v = std::nearbyint(x[k] * inverse);  // default mode: ties to even
    q[k] = static_cast<int8_t>(std::fmin(codes, std::fmax(-codes, v)));
  }
}

// Codes in [-L, L], L = limit (kFullCodes or kNarrowCodes): max|x| / L per
// row; q = nearest (ties to even) of x · (L / max|x|); a row whose
// L / max|x| overflows (max|x| < ~L / FLT_MAX) is all zeros, scale 0.
inline QuantizedRows reference_quantize_rows(const std::vector<float>& x, size_t rows,
                                             size_t depth, int32_t limit) {
  const float codes = static_cast<float>(limit);
  const size_t stride = kernels::int8::padded_depth(depth);
  QuantizedRows out{std::vector<int8_t>(rows * stride, 0), std::vector<float>(rows, 0.0f)};
  for (size_t m = 0; m < rows; ++m) {
    float max_abs = 0.0f;
    for (size_t k = 0; k < depth; ++k) max_abs = std::fmax(max_abs, std::fabs(x[m * depth + k]));
    const float inverse = codes / max_abs;
    if (std::isinf(inverse)) continue;  // max|x| 0 or < L / FLT_MAX: a zero row
    out.scale[m] = max_abs / codes;
    round_row(x.data() + m * depth, depth, codes, inverse, out.q.data() + m * stride);
  }
  return out;
}

// Marian's intgemm8 activations: one range, max|x| over the whole tensor,
// for every row (kernels::int8::quantize_tensor).
inline QuantizedRows reference_quantize_tensor(const std::vector<float>& x, size_t rows,
                                               size_t depth, int32_t limit) {
  const float codes = static_cast<float>(limit);
  const size_t stride = kernels::int8::padded_depth(depth);
  QuantizedRows out{std::vector<int8_t>(rows * stride, 0), std::vector<float>(rows, 0.0f)};
  float max_abs = 0.0f;
  for (size_t i = 0; i < rows * depth; ++i) max_abs = std::fmax(max_abs, std::fabs(x[i]));
  const float inverse = codes / max_abs;
  if (std::isinf(inverse)) return out;  // max|x| 0 or < L / FLT_MAX: zero rows
  for (size_t m = 0; m < rows; ++m) {
    out.scale[m] = max_abs / codes;
    round_row(x.data() + m * depth, depth, codes, inverse, out.q.data() + m * stride);
  }
  return out;
}

// quantize_fixed's definition: every finite row round_half_even(x · inverse)
// clamped to ±limit, scale 1; a row holding inf or NaN scale NaN, zeros.
inline QuantizedRows reference_quantize_fixed(const std::vector<float>& x, size_t rows,
                                              size_t depth, int32_t limit, float inverse) {
  const float codes = static_cast<float>(limit);
  const size_t stride = kernels::int8::padded_depth(depth);
  QuantizedRows out{std::vector<int8_t>(rows * stride, 0), std::vector<float>(rows, 1.0f)};
  for (size_t m = 0; m < rows; ++m) {
    bool finite = true;
    for (size_t k = 0; k < depth; ++k) finite = finite && std::isfinite(x[m * depth + k]);
    if (!finite) {
      out.scale[m] = NAN;
      continue;
    }
    round_row(x.data() + m * depth, depth, codes, inverse, out.q.data() + m * stride);
  }
  return out;
}

// y[m, n] = float(Σ q·w + shift·Σ w) · (x_scale · w_scale) + bias, ReLU
// optional (shift: GemmArgs::sum_shift).
inline std::vector<float> reference_int8_gemm(const QuantizedRows& x, size_t rows, size_t depth,
                                              const std::vector<int8_t>& w,
                                              const std::vector<float>& w_scale,
                                              const float* bias, size_t columns, bool relu,
                                              int32_t shift = 0) {
  const size_t stride = kernels::int8::padded_depth(depth);
  std::vector<float> y(rows * columns);
  for (size_t m = 0; m < rows; ++m) {
    for (size_t n = 0; n < columns; ++n) {
      int64_t sum = 0;
      for (size_t k = 0; k < depth; ++k) {
        sum += static_cast<int64_t>(x.q[m * stride + k]) * w[n * depth + k];
        sum += static_cast<int64_t>(shift) * w[n * depth + k];
      }
      const float scale = x.scale[m] * w_scale[n];
      float v = static_cast<float>(static_cast<int32_t>(sum)) * scale;
      v = v + (bias != nullptr ? bias[n] : 0.0f);
      y[m * columns + n] = relu ? (v > 0.0f ? v : 0.0f) : v;
    }
  }
  return y;
}

// Per-row symmetric weights as the converter makes them (scale = max|w|/127).
struct QuantizedWeights {
  std::vector<int8_t> q;     // [N, K]
  std::vector<float> scale;  // [N]
};

// Weights of ±127 only: with activation codes of ±limit every pair a
// kernel sums is as large as it can be (AVX2's saturating pairs).
inline QuantizedWeights extreme_int8_weights(Random& rng, size_t columns, size_t depth) {
  QuantizedWeights w{std::vector<int8_t>(columns * depth), std::vector<float>(columns, 0.01f)};
  for (int8_t& q : w.q) q = rng.index(0, 1) == 0 ? int8_t{-127} : int8_t{127};
  return w;
}

inline QuantizedWeights random_int8_weights(Random& rng, size_t columns, size_t depth) {
  QuantizedWeights w{std::vector<int8_t>(columns * depth), std::vector<float>(columns)};
  for (size_t n = 0; n < columns; ++n) {
    w.scale[n] = rng.uniform(0.001f, 0.05f);
    for (size_t k = 0; k < depth; ++k) {
      w.q[n * depth + k] = static_cast<int8_t>(static_cast<int>(rng.index(0, 254)) - 127);
    }
  }
  return w;
}

}  // namespace edgemt::testing

#include <doctest/doctest.h>

#include <algorithm>
#include <initializer_list>

namespace edgemt::testing {

// A 64-byte-aligned pack of w (and bias, or nullptr) for the kernels.
struct TestPack {
  std::vector<uint8_t> storage;
  kernels::int8::PackedWeights view;
  TestPack(const QuantizedWeights& w, const float* bias, size_t columns, size_t depth)
      : storage(kernels::int8::packed_bytes(columns, depth) + 64) {
    void* aligned = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
    REQUIRE(kernels::int8::pack_weights(w.q.data(), w.scale.data(), bias, columns, depth, aligned, &view));
  }
};

// The kernel arguments for xq's rows times `pack` into y (row stride y_stride).
inline kernels::int8::GemmArgs gemm_args(const QuantizedRows& xq, size_t rows, size_t depth,
                                         const TestPack& pack, float* y, size_t y_stride,
                                         bool relu, int32_t limit, int32_t shift = 0) {
  kernels::int8::GemmArgs args;
  args.xq = xq.q.data();
  args.xq_stride = kernels::int8::padded_depth(depth);
  args.x_scale = xq.scale.data();
  args.rows = rows;
  args.weights = &pack.view;
  args.y = y;
  args.y_stride = y_stride;
  args.relu = relu;
  args.code_limit = limit;
  args.sum_shift = shift;
  return args;
}

// Full codes of the kinds models give, written as codes: layer-normalized
// rows (mostly within ±64, a share beyond: the AVX2 kernel splits a row
// pair's groups into narrow and wide ones), a ReLU's rows with most groups
// zero (skipped), codes >= -1 and >= -2, codes spread over the whole
// range, rows narrow in their first 1,024 codes and wide after (the AVX2
// kernel decides on the first chunk; its 16-bit correction sums then pass
// 128 groups), zero rows; rows of each kind side by side in groups of 4
// and 3. Column 0's weights are all +127 and column 1's all -127 (the
// largest correction sums), over widths past one stripe of the AVX2
// kernel (512 columns at depth 256).
enum class CodeRowKind {
  kNormalized, kSparseRelu, kAboveMinus1, kAboveMinus2, kSpread, kNarrowThenWide, kZero
};

inline void fill_code_row(Random& rng, CodeRowKind kind, size_t depth, int8_t* q) {
  for (size_t k = 0; k < depth; ++k) {
    int code = 0;
    switch (kind) {
      case CodeRowKind::kNormalized:  // 3% beyond ±64
        code = rng.index(0, 99) < 3 ? static_cast<int>(rng.index(65, 127))
                                    : static_cast<int>(rng.index(0, 128)) - 64;
        if (rng.index(0, 1) == 0) code = -code;
        break;
      case CodeRowKind::kSparseRelu:  // whole groups zero, 85% of codes
        code = rng.index(0, 99) < 85 ? 0 : static_cast<int>(rng.index(1, 127));
        break;
      case CodeRowKind::kAboveMinus1:
        code = static_cast<int>(rng.index(0, 128)) - 1;
        break;
      case CodeRowKind::kAboveMinus2:
        code = static_cast<int>(rng.index(0, 129)) - 2;
        break;
      case CodeRowKind::kSpread:
        code = static_cast<int>(rng.index(0, 254)) - 127;
        break;
      case CodeRowKind::kNarrowThenWide:
        code = k < 1024 ? static_cast<int>(rng.index(0, 128)) - 64
                        : (rng.index(0, 1) == 0 ? 1 : -1) * static_cast<int>(rng.index(65, 127));
        break;
      case CodeRowKind::kZero:
        break;
    }
    q[k] = static_cast<int8_t>(code);
  }
  if (kind == CodeRowKind::kSparseRelu) {  // and whole groups of 4 zero
    for (size_t k = 0; k + 4 <= depth; k += 4) {
      if (rng.index(0, 1) == 0) std::fill(q + k, q + k + 4, int8_t{0});
    }
  }
}

inline void check_gemm_kernel_on_model_codes(kernels::int8::GemmKernel kernel, const char* name,
                                             int32_t shift) {
  using K = CodeRowKind;
  Random rng(813);
  const std::vector<std::vector<K>> row_sets = {
      {K::kNormalized, K::kNormalized, K::kNormalized, K::kNormalized, K::kNormalized},
      {K::kSparseRelu, K::kSparseRelu, K::kSparseRelu, K::kSparseRelu, K::kSparseRelu,
       K::kSparseRelu, K::kSparseRelu},
      {K::kNormalized, K::kSparseRelu, K::kAboveMinus2, K::kAboveMinus2, K::kSpread, K::kSpread,
       K::kNarrowThenWide, K::kNarrowThenWide, K::kZero, K::kNormalized, K::kSparseRelu},
      {K::kSparseRelu, K::kSparseRelu, K::kNormalized, K::kSpread, K::kZero, K::kZero, K::kSpread},
      {K::kAboveMinus1, K::kSparseRelu, K::kAboveMinus1},
      {K::kNarrowThenWide, K::kNarrowThenWide, K::kNarrowThenWide}};
  for (size_t depth : {size_t{13}, size_t{256}, size_t{1030}, size_t{2053}}) {
    const size_t columns = depth > 1030 ? 40 : 530;
    QuantizedWeights w = random_int8_weights(rng, columns, depth);
    for (size_t k = 0; k < depth; ++k) {
      w.q[k] = 127;
      w.q[depth + k] = -127;
    }
    const std::vector<float> bias = rng.normal_vector(columns, 0.0f, 1.0f);
    const TestPack pack(w, bias.data(), columns, depth);
    for (const std::vector<K>& kinds : row_sets) {
      const size_t rows = kinds.size(), stride = kernels::int8::padded_depth(depth);
      QuantizedRows xq{std::vector<int8_t>(rows * stride, 0), std::vector<float>(rows)};
      for (size_t m = 0; m < rows; ++m) {
        xq.scale[m] = 0.001f * static_cast<float>(m + 1);
        fill_code_row(rng, kinds[m], depth, xq.q.data() + m * stride);
      }
      std::vector<float> y(rows * columns, -7.0f);
      kernel(gemm_args(xq, rows, depth, pack, y.data(), columns, false, kernels::int8::kFullCodes,
                       shift),
             0, pack.view.block_count);
      const std::vector<float> want = reference_int8_gemm(xq, rows, depth, w.q, w.scale,
                                                          bias.data(), columns, false, shift);
      CAPTURE(name);
      CAPTURE(shift);
      CAPTURE(depth);
      CAPTURE(rows);
      for (size_t m = 0; m < rows; ++m) {
        CAPTURE(m);
        CHECK(same_bits(&y[m * columns], &want[m * columns], columns));
      }
    }
  }
}

// Whether `kernel` on codes xq (rows × depth) against `pack` (w's columns;
// no bias, no ReLU) gives the exact reference's bits.
inline bool same_as_reference(kernels::int8::GemmKernel kernel, const QuantizedRows& xq,
                              size_t rows, size_t depth, const QuantizedWeights& w,
                              const TestPack& pack, size_t columns, int32_t limit,
                              int32_t shift = 0) {
  std::vector<float> y(rows * columns, -7.0f);
  kernel(gemm_args(xq, rows, depth, pack, y.data(), columns, false, limit, shift), 0,
         pack.view.block_count);
  const std::vector<float> want =
      reference_int8_gemm(xq, rows, depth, w.q, w.scale, nullptr, columns, false, shift);
  return same_bits(y.data(), want.data(), rows * columns);
}

// Signed codes whose 16-bit lanes (codes 4g + {0, 1} or 4g + {2, 3}) add
// up over two groups g, g + 1 (g even) to the AVX2 kernel's limits for
// summing them in 16 bits: positive codes to 128 (row 0) or 129 (row 2),
// negative ones' magnitudes to 129 (row 1) or 128 (row 3), both signs at
// once to 128 each (rows 4 and 5) or positives to 130 beside 128 (row 6). Columns n and n + 14 put
// w = +127 (unsigned w + 128 = 255) under row n % 7's positive codes and
// -127 under its negative ones; n + 7 and n + 21 the reverse: the lanes
// then reach 255·P - N and P - 255·N, past ±32767 where P or N is past
// 128. The kernel decides for rows two by two: each row past a limit
// shares its decision with one within them (rows 4 and 5 pair up).
inline void check_signed_pair_limits(kernels::int8::GemmKernel kernel, const char* name,
                                     int32_t shift) {
  const int8_t pattern[7][16] = {
      {32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32},
      {-32, -32, -32, -33, -32, -32, -32, -32, -32, -32, -32, -33, -32, -32, -32, -32},
      {33, 32, 32, 32, 32, 32, 32, 32, 33, 32, 32, 32, 32, 32, 32, 32},
      {-32, -32, -32, -32, -32, -32, -32, -32, -32, -32, -32, -32, -32, -32, -32, -32},
      {64, -64, 64, -64, 64, -64, 64, -64, 64, -64, 64, -64, 64, -64, 64, -64},
      {100, -28, -100, 28, 28, -100, -28, 100, 100, -28, -100, 28, 28, -100, -28, 100},
      {65, -64, 64, -64, 65, -64, 64, -64, 65, -64, 64, -64, 65, -64, 64, -64}};
  for (size_t depth : {size_t{16}, size_t{1030}}) {
    const size_t columns = 28, rows = 7, stride = kernels::int8::padded_depth(depth);
    QuantizedRows xq{std::vector<int8_t>(rows * stride, 0), std::vector<float>(rows)};
    for (size_t m = 0; m < rows; ++m) {
      xq.scale[m] = 0.01f * static_cast<float>(m + 1);
      for (size_t k = 0; k < depth; ++k) xq.q[m * stride + k] = pattern[m][k % 16];
    }
    QuantizedWeights w{std::vector<int8_t>(columns * depth), std::vector<float>(columns, 0.01f)};
    for (size_t n = 0; n < columns; ++n) {
      const bool reversed = n / rows % 2 == 1;
      for (size_t k = 0; k < depth; ++k) {
        const bool positive = pattern[n % rows][k % 16] > 0;
        w.q[n * depth + k] = positive != reversed ? int8_t{127} : int8_t{-127};
      }
    }
    const TestPack pack(w, nullptr, columns, depth);
    CAPTURE(name);
    CAPTURE(shift);
    CAPTURE(depth);
    CHECK(same_as_reference(kernel, xq, rows, depth, w, pack, columns,
                            kernels::int8::kFullCodes, shift));
  }
}

// Runs `kernel` over odd and round shapes (rows 1-17, columns not multiples
// of 16, depth not multiple of 4), with and without bias and ReLU, for
// activation codes of `limit` (and a GemmArgs::sum_shift), and checks every
// output bit against reference_int8_gemm; columns past N untouched.
inline void check_gemm_kernel_against_reference(kernels::int8::GemmKernel kernel,
                                                const char* name, int32_t limit,
                                                int32_t shift = 0) {
  Random rng(811);
  // 2053: three of the AVX-512 VNNI kernel's 1024-deep chunks, the last
  // partial; checked on fewer shapes (the chunks are what it adds).
  for (size_t depth : {size_t{1}, size_t{3}, size_t{4}, size_t{5}, size_t{64}, size_t{255}, size_t{256},
                       size_t{2053}}) {
    const bool deep = depth > 256;
    for (size_t columns : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{33}, size_t{64}, size_t{100}}) {
      if (deep && columns != 17 && columns != 64) continue;
      const QuantizedWeights w = random_int8_weights(rng, columns, depth);
      const std::vector<float> bias = rng.normal_vector(columns, 0.0f, 1.0f);
      for (bool with_bias : {false, true}) {
        const TestPack pack(w, with_bias ? bias.data() : nullptr, columns, depth);
        for (size_t rows : {size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{5}, size_t{7}, size_t{9}, size_t{17}}) {
          const std::vector<float> x = rng.normal_vector(rows * depth, 0.0f, 2.0f);
          const QuantizedRows xq = reference_quantize_rows(x, rows, depth, limit);
          for (bool relu : {false, true}) {
            const size_t y_stride = columns + 3;  // a stride wider than N: the gap stays untouched
            std::vector<float> y(rows * y_stride, -7.0f);
            kernel(gemm_args(xq, rows, depth, pack, y.data(), y_stride, relu, limit, shift), 0,
                   pack.view.block_count);
            const std::vector<float> want = reference_int8_gemm(
                xq, rows, depth, w.q, w.scale, with_bias ? bias.data() : nullptr, columns, relu,
                shift);
            bool same = true, gap_untouched = true;
            for (size_t m = 0; m < rows; ++m) {
              same = same && same_bits(&y[m * y_stride], &want[m * columns], columns);
              for (size_t n = columns; n < y_stride; ++n) gap_untouched = gap_untouched && y[m * y_stride + n] == -7.0f;
            }
            CAPTURE(name);
            CAPTURE(limit);
            CAPTURE(shift);
            CAPTURE(depth);
            CAPTURE(columns);
            CAPTURE(rows);
            CAPTURE(with_bias);
            CAPTURE(relu);
            CHECK(same);
            CHECK(gap_untouched);
          }
        }
      }
    }
  }
  // Every activation ±1 (codes ±limit) against weights of ±127, rows with
  // long runs of one sign: the largest pairs and sums there are.
  for (size_t depth : {size_t{8}, size_t{256}, size_t{1024}}) {
    const size_t columns = 40, rows = 5;
    const QuantizedWeights w = extreme_int8_weights(rng, columns, depth);
    const TestPack pack(w, nullptr, columns, depth);
    std::vector<float> x(rows * depth);
    for (size_t m = 0; m < rows; ++m) {
      for (size_t k = 0; k < depth; ++k) {
        // rows 0-1 all +1 / all -1; the others random signs, or the weight's
        const float sign = m == 0 ? 1.0f : m == 1 ? -1.0f
                          : m == 2 ? (rng.index(0, 1) == 0 ? 1.0f : -1.0f)
                                   : (w.q[(m % columns) * depth + k] > 0 ? 1.0f : -1.0f);
        x[m * depth + k] = sign;
      }
    }
    const QuantizedRows xq = reference_quantize_rows(x, rows, depth, limit);
    CAPTURE(name);
    CAPTURE(limit);
    CAPTURE(depth);
    CHECK(same_as_reference(kernel, xq, rows, depth, w, pack, columns, limit));
  }
  // Full codes within a window [low, low + span], one for even rows and one
  // for odd ones: a ReLU's [0, 127], the lowest the AVX2 kernel offsets
  // into unsigned operands ([-2, 127]: pairs up to 2·129·127) and one lower
  // (-3), also in one row of a tile only, windows of 129 and 130 codes
  // elsewhere, and codes of ±32 (the AVX2 kernel's 16-bit sums of two
  // groups at their limit, 255·128) beside ±32 or ±33 (past it). Each code
  // sits at its window's top where column
  // (m % columns)'s weight is positive, else at its bottom (the reverse in
  // odd rows), so that column's pairs are as large (or as negative) as the
  // window allows; the other columns get random ones.
  if (limit == kernels::int8::kFullCodes) {
    const int windows[][4] = {{0, 127, 0, 127},     {-2, 129, -2, 129}, {-127, 129, -127, 129},
                              {-64, 129, -64, 129}, {5, 100, 5, 100},   {-3, 130, -3, 130},
                              {-65, 130, -65, 130}, {0, 127, -2, 125},  {0, 127, -3, 125},
                              {-32, 64, -32, 64},   {-32, 64, -33, 66}};
    for (const auto& window : windows) {
      for (size_t depth : {size_t{8}, size_t{256}, size_t{1030}}) {
        const size_t columns = 40, rows = 5, stride = kernels::int8::padded_depth(depth);
        const QuantizedWeights w = extreme_int8_weights(rng, columns, depth);
        const TestPack pack(w, nullptr, columns, depth);
        QuantizedRows xq{std::vector<int8_t>(rows * stride, 0), std::vector<float>(rows)};
        for (size_t m = 0; m < rows; ++m) {
          xq.scale[m] = 0.01f * static_cast<float>(m + 1);
          for (size_t k = 0; k < depth; ++k) {
            const bool top = (w.q[(m % columns) * depth + k] > 0) == (m % 2 == 0);
            const int low = window[2 * (m % 2)], span = window[2 * (m % 2) + 1];
            xq.q[m * stride + k] = static_cast<int8_t>(top ? low + span : low);
          }
        }
        CAPTURE(name);
        CAPTURE(shift);
        CAPTURE(window[0]);
        CAPTURE(window[1]);
        CAPTURE(window[2]);
        CAPTURE(window[3]);
        CAPTURE(depth);
        CHECK(same_as_reference(kernel, xq, rows, depth, w, pack, columns, limit, shift));
      }
    }
    // A ReLU's codes (all >= 0) whose groups' largest xq_0 + xq_1 add up,
    // two groups at a time, to 258 (rows 0, 1 and 4: 128 + 130, the AVX2
    // kernel's 16-bit sums of two groups at their limit, 127·258) or 259
    // (rows 2 and 3: 129 + 130, past it), against columns of +127 or -127.
    for (size_t depth : {size_t{16}, size_t{1030}}) {
      const size_t columns = 20, rows = 5, stride = kernels::int8::padded_depth(depth);
      QuantizedWeights w{std::vector<int8_t>(columns * depth), std::vector<float>(columns, 0.01f)};
      for (size_t n = 0; n < columns; ++n) {
        for (size_t k = 0; k < depth; ++k) w.q[n * depth + k] = n % 2 == 0 ? int8_t{127} : int8_t{-127};
      }
      const TestPack pack(w, nullptr, columns, depth);
      QuantizedRows xq{std::vector<int8_t>(rows * stride, 0), std::vector<float>(rows)};
      for (size_t m = 0; m < rows; ++m) {
        xq.scale[m] = 0.01f * static_cast<float>(m + 1);
        const bool past = m == 2 || m == 3;
        for (size_t k = 0; k < depth; ++k) {
          const bool first_of_pair = k / kernels::int8::kGroupDepth % 2 == 0;
          xq.q[m * stride + k] = static_cast<int8_t>(!first_of_pair ? 65 : past ? 64 + k % 2 : 64);
        }
      }
      CAPTURE(name);
      CAPTURE(shift);
      CAPTURE(depth);
      CHECK(same_as_reference(kernel, xq, rows, depth, w, pack, columns, limit, shift));
    }
    check_signed_pair_limits(kernel, name, shift);
    check_gemm_kernel_on_model_codes(kernel, name, shift);
  }
}

// A zero-skipping kernel (kernels/int8_gemm_sparse.h) against the same
// reference on inputs with none, half, 90% and all of their values zero,
// zeros also in whole groups of 4 (the unit it skips), with a ReLU's
// nonnegative values or signed ones; full and narrow codes, with and
// without Marian's shifted sums; depths around the 8- and 16-group
// compares and past a 512-group list, widths around the 4- and 8-block
// groups.
inline void check_sparse_gemm_kernel(kernels::int8::GemmKernel kernel, const char* name) {
  Random rng(812);
  for (size_t depth : {size_t{3}, size_t{4}, size_t{29}, size_t{32}, size_t{64}, size_t{65},
                       size_t{1030}, size_t{2060}}) {
    for (size_t columns : {size_t{1}, size_t{17}, size_t{64}, size_t{100}, size_t{130}}) {
      const QuantizedWeights w = random_int8_weights(rng, columns, depth);
      const std::vector<float> bias = rng.normal_vector(columns, 0.0f, 1.0f);
      const TestPack pack(w, bias.data(), columns, depth);
      for (size_t zeros_in_10 : {size_t{0}, size_t{5}, size_t{9}, size_t{10}}) {
        for (int variant = 0; variant < 4; ++variant) {
          const bool nonnegative = variant % 2 == 0;
          const int32_t limit = variant < 2 ? kernels::int8::kFullCodes : kernels::int8::kNarrowCodes;
          const int32_t shift = variant == 1 ? 127 : 0;
          const size_t rows = 1 + rng.index(0, 8);
          std::vector<float> x = rng.normal_vector(rows * depth, 0.0f, 2.0f);
          for (size_t i = 0; i < x.size(); ++i) {
            // Whole groups of 4 zero, then single zeros.
            const bool zero_group = rng.index(0, 9) < zeros_in_10;
            if (i % 4 == 0 && zero_group) {
              for (size_t j = i; j < i + 4 && j < x.size(); ++j) x[j] = 0.0f;
            }
            if (nonnegative) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
          }
          const QuantizedRows xq = reference_quantize_rows(x, rows, depth, limit);
          const size_t y_stride = columns + 3;
          std::vector<float> y(rows * y_stride, -7.0f);
          kernel(gemm_args(xq, rows, depth, pack, y.data(), y_stride, variant == 3, limit, shift),
                 0, pack.view.block_count);
          const std::vector<float> want = reference_int8_gemm(
              xq, rows, depth, w.q, w.scale, bias.data(), columns, variant == 3, shift);
          bool same = true, gap_untouched = true;
          for (size_t m = 0; m < rows; ++m) {
            same = same && same_bits(&y[m * y_stride], &want[m * columns], columns);
            for (size_t n = columns; n < y_stride; ++n) gap_untouched = gap_untouched && y[m * y_stride + n] == -7.0f;
          }
          CAPTURE(name);
          CAPTURE(depth);
          CAPTURE(columns);
          CAPTURE(zeros_in_10);
          CAPTURE(variant);
          CHECK(same);
          CHECK(gap_untouched);
        }
      }
    }
  }
  // The extremes: codes ±limit against weights of ±127 in every group.
  const size_t depth = 256, columns = 40, rows = 3;
  const QuantizedWeights w = extreme_int8_weights(rng, columns, depth);
  const TestPack pack(w, nullptr, columns, depth);
  std::vector<float> x(rows * depth);
  for (size_t i = 0; i < x.size(); ++i) x[i] = i % 8 < 4 ? 0.0f : (rng.index(0, 1) ? 1.0f : -1.0f);
  const QuantizedRows xq = reference_quantize_rows(x, rows, depth, kernels::int8::kFullCodes);
  std::vector<float> y(rows * columns, -7.0f);
  kernel(gemm_args(xq, rows, depth, pack, y.data(), columns, false, kernels::int8::kFullCodes), 0,
         pack.view.block_count);
  const std::vector<float> want =
      reference_int8_gemm(xq, rows, depth, w.q, w.scale, nullptr, columns, false, 0);
  CHECK(same_bits(y.data(), want.data(), rows * columns));
}

}  // namespace edgemt::testing
