// The own f32 GEMM's test harness (kernels/f32_gemm.h): packing into
// aligned storage, and a kernel checked against the naive reference with the
// same arithmetic (one fused multiply-add, math::fma_f32, per depth step
// from the bias, exact bits).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/f32_gemm.h"
#include "kernels/portable_math.h"
#include "support/kernel_testing.h"

namespace edgemt::testing {

struct PackedF32 {
  std::vector<uint8_t> storage;
  kernels::f32::PackedWeights weights;
};

inline PackedF32 pack_f32(const std::vector<float>& w, const std::vector<float>& bias, size_t n, size_t k) {
  PackedF32 p;
  p.storage.resize(kernels::f32::packed_bytes(n, k) + 64);
  void* aligned = p.storage.data() + (64 - reinterpret_cast<uintptr_t>(p.storage.data()) % 64) % 64;
  kernels::f32::pack_weights(w.data(), bias.empty() ? nullptr : bias.data(), n, k, aligned, &p.weights);
  return p;
}

// y = clamp(bias + x · wᵀ) by math::fma_f32 per depth step, then the kernels'
// clamp acc > low ? acc : low (low = 0 under a fused ReLU, else -inf: a NaN
// sum becomes low).
inline std::vector<float> f32_gemm_reference(const std::vector<float>& x, size_t x_stride,
                                             const std::vector<float>& w, const std::vector<float>& bias,
                                             size_t m, size_t n, size_t k, bool relu) {
  const float low = relu ? 0.0f : -INFINITY;
  std::vector<float> y(m * n);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float acc = bias[j];
      for (size_t d = 0; d < k; ++d) acc = kernels::math::fma_f32(x[i * x_stride + d], w[j * k + d], acc);
      y[i * n + j] = acc > low ? acc : low;
    }
  }
  return y;
}

// Runs `kernel` on x [m, x_stride] into y [m, y_stride] over every block of
// p; `split`: in two calls over the two halves of the blocks (as the
// thread pool splits them).
inline void run_f32_gemm(kernels::f32::GemmKernel kernel, const std::vector<float>& x, size_t x_stride,
                         size_t m, const PackedF32& p, std::vector<float>* y, size_t y_stride, bool relu,
                         bool split) {
  kernels::f32::GemmArgs args;
  args.x = x.data();
  args.x_stride = x_stride;
  args.rows = m;
  args.weights = &p.weights;
  args.y = y->data();
  args.y_stride = y_stride;
  args.relu = relu;
  const size_t half = split ? p.weights.block_count / 2 : 0;
  kernel(args, 0, half);
  kernel(args, half, p.weights.block_count - half);
}

// Sums that a multiply-add emulated by rounding twice (double, then float)
// gets wrong, against math::fma_f32: bias 2^30 + 2^7 (an odd last bit) plus
// (1 + 2^-23)·(2^6 - 2^-17) = 2^6 - 2^-40 is just below the midpoint
// 2^30 + 2^7 + 2^6; in double it rounds to the midpoint, and then to even,
// 2^30 + 2^8, where fma gives 2^30 + 2^7. Likewise below 2^-126: bias
// 3·2^-128 + 2^-149 plus 2^-75(1 + 2^-20) · 2^-75(1 - 2^-20) (x and w
// tiny), or plus 13788017·2^-34 · 623·2^-149 = 2^-150 - 2^-183 (x normal,
// only w tiny: the weights' own guard, PackedWeights::tiny). Every third
// column of 1-3 rows, a second depth step adding x·0; each pack run as
// packed and as a view whose weights were not looked at (kUnknown).
inline void check_f32_gemm_double_rounding(kernels::f32::GemmKernel kernel) {
  enum Case { kNormalRange, kTinyBoth, kTinyWeight };
  const float big = std::ldexp(1.0f, 30) + std::ldexp(1.0f, 7);
  const float big_x = 1.0f + std::ldexp(1.0f, -23), big_w = std::ldexp(1.0f, 6) - std::ldexp(1.0f, -17);
  REQUIRE(static_cast<float>(static_cast<double>(big_x) * static_cast<double>(big_w) + static_cast<double>(big)) !=
          kernels::math::fma_f32(big_x, big_w, big));
  const float small = 3.0f * std::ldexp(1.0f, -128) + std::ldexp(1.0f, -149);
  const float small_x = std::ldexp(1.0f + std::ldexp(1.0f, -20), -75);
  const float small_w = std::ldexp(1.0f - std::ldexp(1.0f, -20), -75);
  const float normal_x = std::ldexp(13788017.0f, -34), tiny_w = std::ldexp(623.0f, -149);
  REQUIRE(static_cast<float>(static_cast<double>(normal_x) * static_cast<double>(tiny_w) + static_cast<double>(small)) !=
          kernels::math::fma_f32(normal_x, tiny_w, small));
  REQUIRE(std::fabs(normal_x) >= kernels::f32::kTinyMagnitude);
  REQUIRE(std::fabs(tiny_w) < kernels::f32::kTinyMagnitude);
  for (Case c : {kNormalRange, kTinyBoth, kTinyWeight}) {
    for (size_t m : {1, 2, 3}) {
      CAPTURE(static_cast<int>(c));
      CAPTURE(m);
      const size_t k = 2, n = 20;
      Random rng(63);
      std::vector<float> x = rng.normal_vector(m * k, 0.0f, 1.0f);
      std::vector<float> w = rng.normal_vector(n * k, 0.0f, 0.5f);
      std::vector<float> bias = rng.normal_vector(n, 0.0f, 1.0f);
      for (size_t i = 0; i < m; ++i) x[i * k] = c == kNormalRange ? big_x : c == kTinyBoth ? small_x : normal_x;
      for (size_t j = 0; j < n; j += 3) {
        bias[j] = c == kNormalRange ? big : small;
        w[j * k] = c == kNormalRange ? big_w : c == kTinyBoth ? small_w : tiny_w;
        w[j * k + 1] = 0.0f;
      }
      PackedF32 p = pack_f32(w, bias, n, k);
      REQUIRE(p.weights.tiny == (c == kNormalRange ? kernels::f32::TinyWeights::kNone
                                                   : kernels::f32::TinyWeights::kSome));
      const std::vector<float> want = f32_gemm_reference(x, k, w, bias, m, n, k, false);
      for (kernels::f32::TinyWeights tiny : {p.weights.tiny, kernels::f32::TinyWeights::kUnknown}) {
        p.weights.tiny = tiny;
        std::vector<float> got(m * n, NAN);
        run_f32_gemm(kernel, x, k, m, p, &got, n, false, false);
        CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
      }
    }
  }
}

// Runs `kernel` on x [m, x_stride] with w [n, k] and bias, and checks y
// against f32_gemm_reference bit for bit; y has a row stride past n, whose
// extra columns must stay untouched.
inline void check_f32_gemm_on(kernels::f32::GemmKernel kernel, const std::vector<float>& x, size_t x_stride,
                              const std::vector<float>& w, const std::vector<float>& bias, size_t m, size_t n,
                              size_t k, bool relu) {
  const size_t y_stride = n + 5;
  const PackedF32 p = pack_f32(w, bias, n, k);
  const std::vector<float> want = f32_gemm_reference(x, x_stride, w, bias, m, n, k, relu);
  const float sentinel = 12345.0f;
  std::vector<float> got(m * y_stride, sentinel);
  run_f32_gemm(kernel, x, x_stride, m, p, &got, y_stride, relu, true);
  bool same = true, untouched = true;
  for (size_t i = 0; i < m; ++i) {
    same = same && std::memcmp(got.data() + i * y_stride, want.data() + i * n, n * sizeof(float)) == 0;
    for (size_t j = n; j < y_stride; ++j) untouched = untouched && got[i * y_stride + j] == sentinel;
  }
  CHECK(same);
  CHECK(untouched);
}

// check_f32_gemm_on with random finite weights [n, k] and bias (a
// zero-skipping kernel's contract).
inline void check_sparse_f32_gemm_on(kernels::f32::GemmKernel kernel, const std::vector<float>& x,
                                     size_t x_stride, size_t m, size_t n, size_t k, bool relu, Random* rng) {
  const std::vector<float> w = rng->normal_vector(n * k, 0.0f, 0.5f);
  const std::vector<float> bias = rng->normal_vector(n, 0.0f, 1.0f);
  check_f32_gemm_on(kernel, x, x_stride, w, bias, m, n, k, relu);
}

// Rows as an encoder batch holds them (x86/listed_rows.h): sentences whose
// rows share their nonzeros, one after another, at lengths that end 6-row
// tiles anywhere; two rows without zeros after a sentence of 90% nonzeros,
// before a sparse one, at a depth (1,536) where a chunk's list holds only
// two such rows: the first part of a tile that pays alone (the x86 kernels
// list its rows one by one, and must start a new chunk when the list is
// full, not write past it).
inline void check_sparse_f32_gemm_sentences(kernels::f32::GemmKernel kernel) {
  Random rng(71);
  struct Sentence {
    size_t rows;
    size_t nonzero_percent;  // of the depths, the same ones for all its rows
  };
  const std::vector<Sentence> sentences = {{6, 90}, {1, 100}, {1, 100}, {6, 10}, {16, 15}, {13, 15},
                                           {7, 15},  {3, 15},  {5, 15},  {4, 15}, {1, 15},  {2, 15}};
  const size_t k = 1536, x_stride = k + 3;
  std::vector<float> x;
  size_t m = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (const Sentence& sentence : sentences) {
      std::vector<bool> nonzero(k);
      for (size_t d = 0; d < k; ++d) nonzero[d] = rng.index(0, 99) < sentence.nonzero_percent;
      for (size_t r = 0; r < sentence.rows; ++r, ++m) {
        const std::vector<float> row = rng.normal_vector(x_stride, 0.0f, 1.0f);
        for (size_t d = 0; d < x_stride; ++d) {
          x.push_back(d >= k || nonzero[d] ? row[d] : d % 3 ? 0.0f : -0.0f);
        }
      }
    }
  }
  for (size_t n : {17, 130}) {
    for (bool relu : {false, true}) {
      CAPTURE(n);
      CAPTURE(relu);
      check_sparse_f32_gemm_on(kernel, x, x_stride, m, n, k, relu, &rng);
    }
  }
}

// A kernel against f32_gemm_reference, bit for bit: shapes around the
// block width and the tiles' row counts, with and without a fused ReLU,
// inputs with a row stride past K, outputs with one past N (whose extra
// columns must stay untouched), and, with `specials`, NaN and infinite
// inputs and weights (NaN, inf and -inf sums reach the clamp).
// A zero-skipping kernel (kernels/f32_gemm_sparse.h) against the same
// reference, which multiplies every zero: inputs with none, half, 90% and
// all of their values zero (-0 among them), with a NaN input in one
// variant; finite weights (the kernels' contract), a nonzero bias.
// Depths around the 8- and 16-lane compares and past a 512-input list,
// widths around the 4- and 8-block groups and a last block of 14 columns;
// then rows and depths past the x86 kernels' chunks of listed inputs
// (x86/listed_rows.h: 64 rows, 4,096 inputs, in slices past that); then
// rows in runs that share their zeros, which the x86 kernels run as tiles
// of up to 6 rows over the union of their nonzeros, and tiles of rows with
// zeros of their own between them; last, sentences as an encoder batch
// holds them.
inline void check_sparse_f32_gemm_kernel(kernels::f32::GemmKernel kernel) {
  Random rng(67);
  struct Shape {
    size_t m, k;
    std::vector<size_t> widths;
    std::vector<int> zeros;
    size_t shared = 1;  // rows in runs of this many with their zeros at the same depths
    bool mixed = false;  // but every other 6 rows each with zeros of its own
  };
  const std::vector<Shape> shapes = {
      {1, 0, {1, 16, 17, 30, 100, 130, 260}, {0, 5, 9, 10}},
      {3, 0, {1, 16, 17, 100, 130, 260}, {0, 5, 9, 10}},
      {9, 0, {1, 16, 17, 100, 130, 260}, {0, 5, 9, 10}},
      {70, 33, {17, 130}, {0, 9}},     // more rows than a chunk holds
      {9, 3000, {17, 130}, {0, 9}},    // a few rows per chunk
      {3, 8195, {17, 130}, {0, 5}},    // three slices of the depth
      // Rows that share their nonzeros (AVX-512's shared tiles): tiles of
      // 6 and the 2-5 rows after them, one pattern or two per tile, tiles
      // between rows on their own lists, chunks ended by rows or by depth.
      {8, 0, {1, 17, 30, 100, 130, 260}, {5, 9}, 8},
      {11, 0, {1, 17, 30, 100, 130, 260}, {9}, 11},
      {13, 0, {17, 130}, {9, 10}, 3},
      {10, 0, {17, 130}, {9}, 10},
      {9, 0, {17, 130}, {9}, 9},
      {40, 64, {17, 130}, {9}, 2},
      {130, 33, {17, 130}, {9}, 5},
      {130, 33, {17, 30, 130}, {9}, 6, true},
      {20, 1500, {17, 130}, {9}, 20},
  };
  for (const Shape& shape : shapes) {
    const size_t m = shape.m;
    const std::vector<size_t> depths =
        shape.k != 0 ? std::vector<size_t>{shape.k} : std::vector<size_t>{1, 7, 8, 15, 16, 17, 33, 515};
    for (size_t k : depths) {
      for (size_t n : shape.widths) {
        for (int zeros_in_10 : shape.zeros) {
          for (int variant = 0; variant < 3; ++variant) {
            const bool relu = variant == 1, nan_input = variant == 2;
            CAPTURE(m);
            CAPTURE(k);
            CAPTURE(n);
            CAPTURE(zeros_in_10);
            CAPTURE(relu);
            CAPTURE(nan_input);
            const size_t x_stride = k + 3;
            std::vector<float> x = rng.normal_vector(m * x_stride, 0.0f, 1.0f);
            for (size_t i = 0; i < x.size(); ++i) {
              const size_t row = i / x_stride;
              const size_t run_start = shape.mixed && row / 6 % 2 == 1 ? row : row - row % shape.shared;
              const bool zero = row == run_start ? static_cast<int>(rng.index(0, 9)) < zeros_in_10
                                                 : x[run_start * x_stride + i % x_stride] == 0.0f;
              if (zero) x[i] = i % 3 ? 0.0f : -0.0f;
            }
            if (nan_input) x[(m - 1) * x_stride + k / 2] = NAN;
            check_sparse_f32_gemm_on(kernel, x, x_stride, m, n, k, relu, &rng);
          }
        }
      }
    }
  }
  check_sparse_f32_gemm_sentences(kernel);
}

inline void check_f32_gemm_kernel(kernels::f32::GemmKernel kernel) {
  Random rng(61);
  // Rows: the 4-row tiles and their remainders, and the AVX-512 kernel's
  // tall tiles (5-14 rows in one tile, 15-42 in 2 or 3 of 7-14 rows, 43 back
  // to row tiles: 6 rows there, 43-47 leaving 1-5).
  std::vector<size_t> rows = {1, 2, 3, 4, 5, 7, 8, 9, 14};
  for (size_t m = 15; m <= 47; ++m) rows.push_back(m);
  for (size_t m : rows) {
    for (size_t k : {1, 7, 64, 256}) {
      for (size_t n : {1, 15, 16, 17, 33, 64, 100}) {
        for (int variant = 0; variant < 3; ++variant) {
          const bool relu = variant == 1, specials = variant == 2;
          CAPTURE(m);
          CAPTURE(k);
          CAPTURE(n);
          CAPTURE(relu);
          CAPTURE(specials);
          const size_t x_stride = k + 3;
          std::vector<float> x = rng.normal_vector(m * x_stride, 0.0f, 1.0f);
          std::vector<float> w = rng.normal_vector(n * k, 0.0f, 0.5f);
          const std::vector<float> bias = rng.normal_vector(n, 0.0f, 1.0f);
          if (specials) {
            x[(m - 1) * x_stride + k / 2] = NAN;        // the last row's sums: NaN
            w[(n / 2) * k] = INFINITY;                  // column n/2: ±inf, or NaN where 0·inf
            if (n > 2) w[(n - 1) * k + k - 1] = -INFINITY;
          }
          check_f32_gemm_on(kernel, x, x_stride, w, bias, m, n, k, relu);
        }
      }
    }
  }
  check_f32_gemm_double_rounding(kernel);
}

}  // namespace edgemt::testing
