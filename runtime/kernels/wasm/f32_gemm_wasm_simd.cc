// The f32 GEMM (f32_gemm.h) with WebAssembly SIMD (128-bit), for the
// browser build (platforms/wasm), with the native kernels' bits: one fused
// multiply-add per depth step.
//
// WebAssembly has no fused multiply-add (relaxed SIMD's may or may not
// fuse). The portable kernel's math::fma_f32 emulates one in double, one
// call per multiply-add. Here the same double arithmetic runs two lanes at
// a time, per depth step:
//   s   = double(x) · double(w) + double(acc)   the product is exact (24 + 24 bits)
//   acc = float(s)                              the second rounding
// float(s) is the fused result unless s lands exactly halfway between two
// floats (portable_math.h: fma_f32_from_double). Such lanes go to
// the portable kernel (math::fma_f32), which corrects them:
//  - s with the low 29 bits of its double mantissa equal to 1 << 28 (a
//    midpoint in the normal float range) is flagged per lane and step, and
//    a tile with a flag is computed again by the portable kernel (rare: about
//    one sum in 2^29 of those not exact in double);
//  - midpoints below 2^-126, where the subnormal floats' spacing is wider:
//    s can be inexact there only when |x · w| < 2^-131 (else every term is
//    a multiple of 2^-178 and |s| < 2^-126 fits 53 bits), which needs an x
//    or a w below 2^-65 that is not zero; a block or rows with one go to
//    the portable kernel whole (never in a trained model).
// Tiles: one row × 16 columns (8 accumulators of 2 doubles), or 2 rows × 8
// columns (each promoted weight serves two rows).
#include <wasm_simd128.h>

#include <cmath>
#include <cstring>

#include "kernels/f32_gemm.h"

namespace edgemt::kernels::f32 {
namespace {

constexpr float kSmallest = 0x1p-65f;  // |x|, |w| at least this (or 0): |x·w| >= 2^-130

// Whether any of v[0, n) is nonzero and below kSmallest in magnitude.
bool has_tiny(const float* v, size_t n) {
  const v128_t smallest = wasm_f32x4_splat(kSmallest), zero = wasm_f32x4_splat(0.0f);
  v128_t any = wasm_i32x4_splat(0);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t a = wasm_f32x4_abs(wasm_v128_load(v + i));
    any = wasm_v128_or(any, wasm_v128_and(wasm_f32x4_lt(a, smallest), wasm_f32x4_gt(a, zero)));
  }
  bool found = wasm_v128_any_true(any);
  for (; i < n; ++i) found = found || (std::fabs(v[i]) < kSmallest && v[i] != 0.0f);
  return found;
}

// Block b for rows [m0, m0 + rows) with the portable kernel (math::fma_f32
// per step): the fallback for flagged tiles and tiny values.
void portable_block(const GemmArgs& a, size_t m0, size_t rows, size_t b) {
  GemmArgs part = a;
  part.x = a.x + m0 * a.x_stride;
  part.y = a.y + m0 * a.y_stride;
  part.rows = rows;
  gemm_portable(part, b, 1);
}

// acc + x·w in double, then rounded to float (kept as a double); `flags`
// collects lanes whose double sum was a normal-range float midpoint.
inline v128_t step(v128_t acc, v128_t x, v128_t w, v128_t* flags) {
  const v128_t low29 = wasm_i64x2_splat(0x1fffffff), halfway = wasm_i64x2_splat(0x10000000);
  const v128_t s = wasm_f64x2_add(wasm_f64x2_mul(x, w), acc);
  *flags = wasm_v128_or(*flags, wasm_i64x2_eq(wasm_v128_and(s, low29), halfway));
  return wasm_f64x2_promote_low_f32x4(wasm_f32x4_demote_f64x2_zero(s));
}

// kRows rows from m0 × 4·kQuads columns from c0 of block b. false (nothing
// written) when a sum was a float midpoint.
template <size_t kRows, size_t kQuads>
bool tile(const GemmArgs& a, size_t m0, size_t b, size_t c0) {
  const PackedWeights& w = *a.weights;
  const float* block = w.blocks + b * w.depth * kBlockColumns + c0;
  const size_t n0 = b * kBlockColumns + c0;
  v128_t acc[kRows][2 * kQuads];  // [row][column pair]: doubles holding floats
  for (size_t p = 0; p < 2 * kQuads; ++p) {
    const v128_t bias = wasm_f64x2_make(static_cast<double>(w.bias[n0 + 2 * p]),
                                        static_cast<double>(w.bias[n0 + 2 * p + 1]));
    for (size_t r = 0; r < kRows; ++r) acc[r][p] = bias;
  }
  v128_t flags = wasm_i64x2_splat(0);
  const float* x = a.x + m0 * a.x_stride;
  for (size_t k = 0; k < w.depth; ++k) {
    v128_t xr[kRows];
    for (size_t r = 0; r < kRows; ++r) xr[r] = wasm_f64x2_splat(static_cast<double>(x[r * a.x_stride + k]));
    const float* wk = block + k * kBlockColumns;
    for (size_t q = 0; q < kQuads; ++q) {
      const v128_t w4 = wasm_v128_load(wk + 4 * q);
      const v128_t lo = wasm_f64x2_promote_low_f32x4(w4);
      const v128_t hi = wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(w4, w4, 2, 3, 2, 3));
      for (size_t r = 0; r < kRows; ++r) {
        acc[r][2 * q] = step(acc[r][2 * q], xr[r], lo, &flags);
        acc[r][2 * q + 1] = step(acc[r][2 * q + 1], xr[r], hi, &flags);
      }
    }
  }
  if (wasm_v128_any_true(flags)) return false;
  if (n0 >= w.columns) return true;
  const size_t width = w.columns - n0 < 4 * kQuads ? w.columns - n0 : 4 * kQuads;
  const float low = a.relu ? 0.0f : -__builtin_huge_valf();
  for (size_t r = 0; r < kRows; ++r) {
    float out[4 * kQuads + 2];
    // Each store writes a pair and two zeros, which the next pair overwrites.
    for (size_t p = 0; p < 2 * kQuads; ++p) wasm_v128_store(out + 2 * p, wasm_f32x4_demote_f64x2_zero(acc[r][p]));
    for (size_t c = 0; c < width; ++c) out[c] = out[c] > low ? out[c] : low;  // the kernels' clamp
    std::memcpy(a.y + (m0 + r) * a.y_stride + n0, out, width * sizeof(float));
  }
  return true;
}

}  // namespace

void gemm_wasm_simd(const GemmArgs& a, size_t first_block, size_t block_count) {
  const PackedWeights& w = *a.weights;
  bool tiny_x = false;
  for (size_t m = 0; m < a.rows && !tiny_x; ++m) tiny_x = has_tiny(a.x + m * a.x_stride, w.depth);
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    if (tiny_x || has_tiny(w.blocks + b * w.depth * kBlockColumns, w.depth * kBlockColumns)) {
      portable_block(a, 0, a.rows, b);
      continue;
    }
    if (a.rows == 1) {
      if (!tile<1, 4>(a, 0, b, 0)) portable_block(a, 0, 1, b);
      continue;
    }
    for (size_t m = 0; m < a.rows; m += 2) {
      for (size_t c0 = 0; c0 < kBlockColumns; c0 += 8) {
        const bool done = a.rows - m >= 2 ? tile<2, 2>(a, m, b, c0) : tile<1, 2>(a, m, b, c0);
        // The whole block again for these rows (the other half's bits too).
        if (!done) portable_block(a, m, a.rows - m >= 2 ? 2 : 1, b);
      }
    }
  }
}

}  // namespace edgemt::kernels::f32
