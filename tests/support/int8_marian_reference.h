// A naive reference for Marian's saturating int8 sums (kernels/
// int8_gemm_marian.h), written from intgemm's register steps on the
// row-major [N, K] weights rather than from the pack, and the check every
// such kernel passes: the reference's bits on inputs that saturate (the
// check also proves they do) and on inputs that do not (the exact
// reference's bits).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/int8_gemm_marian.h"
#include "support/int8_reference.h"

namespace edgemt::testing {

// One intgemm register step after another: a register holds 2L depths of
// x and of column n, vpmaddubsw makes L pairs, and each pair is added into
// its 16-bit lane with saturation (unshifted), or saturated alone and
// added in 32 bits (shifted, x + shift as the unsigned operand).
inline int32_t reference_marian_sum(const int8_t* x, const int8_t* w, size_t depth, int32_t lanes,
                                    int32_t shift) {
  auto saturate = [](int64_t v) { return static_cast<int32_t>(std::clamp<int64_t>(v, -32768, 32767)); };
  const size_t step = 2 * static_cast<size_t>(lanes);
  std::vector<int32_t> lane(static_cast<size_t>(lanes), 0);
  int64_t shifted = 0;
  for (size_t start = 0; start < depth; start += step) {
    for (size_t i = 0; i < static_cast<size_t>(lanes); ++i) {
      int64_t pair = 0;
      for (size_t k = start + 2 * i; k < start + 2 * i + 2 && k < depth; ++k) {
        pair += static_cast<int64_t>(x[k] + shift) * w[k];
      }
      if (shift != 0) {
        shifted += saturate(pair);
      } else {
        lane[i] = saturate(lane[i] + pair);
      }
    }
  }
  int64_t sum = shifted;
  for (int32_t s : lane) sum += s;
  return static_cast<int32_t>(sum);
}

// y [rows, columns] of the scheme's float part on those sums.
inline std::vector<float> reference_marian_gemm(const QuantizedRows& x, size_t rows, size_t depth,
                                                const QuantizedWeights& w, const float* bias,
                                                size_t columns, bool relu, int32_t lanes,
                                                int32_t shift) {
  const size_t stride = kernels::int8::padded_depth(depth);
  std::vector<float> y(rows * columns);
  for (size_t m = 0; m < rows; ++m) {
    for (size_t n = 0; n < columns; ++n) {
      const int32_t sum = reference_marian_sum(&x.q[m * stride], &w.q[n * depth], depth, lanes, shift);
      float v = static_cast<float>(sum) * (x.scale[m] * w.scale[n]);
      v = v + (bias != nullptr ? bias[n] : 0.0f);
      y[m * columns + n] = relu ? (v > 0.0f ? v : 0.0f) : v;
    }
  }
  return y;
}

// y [rows, columns] of `kernel` with AVX2's 16 saturating lanes, unshifted,
// without bias or ReLU.
inline std::vector<float> run_avx2_lanes(kernels::int8::GemmKernel kernel, const QuantizedRows& xq,
                                         size_t rows, size_t depth, const QuantizedWeights& w,
                                         size_t columns) {
  const TestPack pack(w, nullptr, columns, depth);
  std::vector<float> y(rows * columns);
  kernels::int8::GemmArgs args =
      gemm_args(xq, rows, depth, pack, y.data(), columns, false, kernels::int8::kFullCodes);
  args.saturating_lanes = kernels::int8::kAvx2Lanes;
  kernel(args, 0, pack.view.block_count);
  return y;
}

// Weights whose sign follows x's row 0 in long runs, so that lanes keep
// growing one way and saturate; row 1 row 0's ReLU (no negative code), the
// other rows random. 3 and 5 rows: a kernel's tiles of 1, 2 and 4 rows, and
// paths for fewer and more than 4 rows.
inline void check_marian_kernel(kernels::int8::GemmKernel kernel, const char* name) {
  Random rng(57);
  size_t saturated_cells[2] = {0, 0};  // unshifted, shifted
  for (int32_t lanes : {kernels::int8::kSsse3Lanes, kernels::int8::kAvx2Lanes,
                        kernels::int8::kAvx512bwLanes}) {
    for (int32_t shift : {0, 127}) {
      for (size_t depth : {size_t{4}, size_t{62}, size_t{256}, size_t{1000}, size_t{1536}, size_t{2053}}) {
        for (size_t columns : {size_t{1}, size_t{17}, size_t{40}, size_t{70}}) {
          const size_t rows = columns % 2 == 0 ? 5 : 3;
          std::vector<float> x = rng.normal_vector(rows * depth, 0.0f, 1.0f);
          for (size_t k = 0; k < depth; ++k) x[k] = (k / 24) % 2 == 0 ? 1.0f - 0.001f * (k % 7) : -1.0f;
          // Row 1 is row 0's ReLU: no negative code, and it saturates too.
          for (size_t k = 0; k < depth; ++k) x[depth + k] = x[k] > 0.0f ? x[k] : 0.0f;
          QuantizedWeights w = random_int8_weights(rng, columns, depth);
          for (size_t n = 0; n + 1 < columns; n += 2) {  // even columns follow row 0's signs
            for (size_t k = 0; k < depth; ++k) {
              const int magnitude = 100 + static_cast<int>(rng.index(0, 27));
              w.q[n * depth + k] = static_cast<int8_t>(x[k] > 0.0f ? magnitude : -magnitude);
            }
          }
          const std::vector<float> bias = rng.normal_vector(columns, 0.0f, 1.0f);
          const TestPack pack(w, bias.data(), columns, depth);
          const QuantizedRows xq =
              reference_quantize_rows(x, rows, depth, kernels::int8::kFullCodes);
          for (bool relu : {false, true}) {
            const size_t y_stride = columns + 2;
            std::vector<float> y(rows * y_stride, -7.0f);
            kernels::int8::GemmArgs args = gemm_args(xq, rows, depth, pack, y.data(), y_stride,
                                                     relu, kernels::int8::kFullCodes, shift);
            args.saturating_lanes = lanes;
            kernel(args, 0, pack.view.block_count);
            const std::vector<float> want = reference_marian_gemm(xq, rows, depth, w, bias.data(),
                                                                  columns, relu, lanes, shift);
            const std::vector<float> exact = reference_int8_gemm(xq, rows, depth, w.q, w.scale,
                                                                 bias.data(), columns, relu, shift);
            bool same = true, gap_untouched = true;
            for (size_t m = 0; m < rows; ++m) {
              same = same && same_bits(&y[m * y_stride], &want[m * columns], columns);
              for (size_t n = 0; n < columns; ++n) {
                saturated_cells[shift != 0] += want[m * columns + n] != exact[m * columns + n] ? 1 : 0;
              }
              for (size_t n = columns; n < y_stride; ++n) gap_untouched = gap_untouched && y[m * y_stride + n] == -7.0f;
            }
            CAPTURE(name);
            CAPTURE(lanes);
            CAPTURE(shift);
            CAPTURE(depth);
            CAPTURE(columns);
            CAPTURE(relu);
            CHECK(same);
            CHECK(gap_untouched);
          }
        }
      }
    }
  }
  CHECK(saturated_cells[0] > 100);  // the inputs above do reach the saturation
  CHECK(saturated_cells[1] > 100);
  {  // More rows than the AVX2 kernel checks for a sign at a time (1024),
     // every third one a ReLU's (1024 is not a multiple of 3).
    const size_t depth = 70, columns = 20, rows = 1030;
    const QuantizedWeights w = random_int8_weights(rng, columns, depth);
    std::vector<float> x = rng.normal_vector(rows * depth, 0.0f, 1.0f);
    for (size_t i = 0; i < x.size(); ++i) {
      if ((i / depth) % 3 == 1 && x[i] < 0.0f) x[i] = 0.0f;
    }
    const QuantizedRows xq = reference_quantize_rows(x, rows, depth, kernels::int8::kFullCodes);
    const std::vector<float> y = run_avx2_lanes(kernel, xq, rows, depth, w, columns);
    const std::vector<float> want = reference_marian_gemm(xq, rows, depth, w, nullptr, columns, false,
                                                          kernels::int8::kAvx2Lanes, 0);
    CAPTURE(name);
    CHECK(same_bits(y.data(), want.data(), rows * columns));
  }
  // Small codes never saturate: the exact reference's bits.
  const size_t depth = 512, columns = 33, rows = 4;
  const QuantizedWeights w = random_int8_weights(rng, columns, depth);
  std::vector<float> x = rng.normal_vector(rows * depth, 0.0f, 1.0f);
  QuantizedRows xq = reference_quantize_rows(x, rows, depth, kernels::int8::kFullCodes);
  for (int8_t& q : xq.q) q = static_cast<int8_t>(q / 16);  // |x| <= 7: a lane stays below 32767
  const std::vector<float> y = run_avx2_lanes(kernel, xq, rows, depth, w, columns);
  const std::vector<float> exact =
      reference_int8_gemm(xq, rows, depth, w.q, w.scale, nullptr, columns, false);
  CAPTURE(name);
  CHECK(same_bits(y.data(), exact.data(), rows * columns));
}

}  // namespace edgemt::testing
