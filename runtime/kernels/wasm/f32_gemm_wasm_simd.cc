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
// math::fma_f32 (the portable kernel's arithmetic), which corrects them:
//  - s with the low 29 bits of its double mantissa equal to 1 << 28 (a
//    midpoint in the normal float range) is flagged per lane and step. A
//    tile with a flag runs again with a flag per column pair, and only the
//    flagged columns are computed with math::fma_f32 (redo_columns). Not
//    rare with fp16 weights, whose products have few significant bits: on
//    the bundled fp16 file, recomputing whole blocks with gemm_portable
//    (slower per sum than redo_columns in WebAssembly) made Node 4x slower,
//    3.6 -> 0.9 sentences/s; only the flagged columns: 5.4;
//  - midpoints below 2^-126, where the subnormal floats' spacing is wider:
//    s can be inexact there only when |x · w| < 2^-131 (else every term is
//    a multiple of 2^-178 and |s| < 2^-126 fits 53 bits), which needs an x
//    or a w below 2^-65 that is not zero (kTinyMagnitude); a block or rows
//    with one are computed whole with math::fma_f32 (never in a trained
//    model). The weights are looked at once, when packed (PackedWeights::
//    tiny): scanning each block on every call, as before, held Node to 248
//    sentences/s on the fp32 SSRU fixture (now 274-294) and 5.7 on the
//    bundled fp16 file (now 6.2).
// Tiles: one row × 16 columns (8 accumulators of 2 doubles), or 2 rows × 8
// columns (each promoted weight serves two rows).
#include <wasm_simd128.h>

#include <cstring>

#include "kernels/f32_gemm.h"
#include "kernels/portable_math.h"

namespace edgemt::kernels::f32 {
namespace {

// acc + x·w in double, then rounded to float (kept as a double); `flags`
// collects lanes whose double sum was a normal-range float midpoint.
inline v128_t step(v128_t acc, v128_t x, v128_t w, v128_t* flags) {
  const v128_t low29 = wasm_i64x2_splat(0x1fffffff), halfway = wasm_i64x2_splat(0x10000000);
  const v128_t s = wasm_f64x2_add(wasm_f64x2_mul(x, w), acc);
  *flags = wasm_v128_or(*flags, wasm_i64x2_eq(wasm_v128_and(s, low29), halfway));
  return wasm_f64x2_promote_low_f32x4(wasm_f32x4_demote_f64x2_zero(s));
}

// kRows rows from m0 × 4·kQuads columns from c0 of block b. Returns the
// columns whose sums met a float midpoint in some row (bit j: column c0 +
// j), whose outputs are then wrong: with kWhich, each column's own bit
// (a flag vector per column pair; the slow path), every column written;
// without, all bits at the first flag and nothing written.
template <size_t kRows, size_t kQuads, bool kWhich>
uint32_t tile(const GemmArgs& a, size_t m0, size_t b, size_t c0) {
  const PackedWeights& w = *a.weights;
  const float* block = w.blocks + b * w.depth * kBlockColumns + c0;
  const size_t n0 = b * kBlockColumns + c0;
  v128_t acc[kRows][2 * kQuads];  // [row][column pair]: doubles holding floats
  for (size_t p = 0; p < 2 * kQuads; ++p) {
    const v128_t bias = wasm_f64x2_make(static_cast<double>(w.bias[n0 + 2 * p]),
                                        static_cast<double>(w.bias[n0 + 2 * p + 1]));
    for (size_t r = 0; r < kRows; ++r) acc[r][p] = bias;
  }
  v128_t flags[kWhich ? 2 * kQuads : 1];
  for (v128_t& f : flags) f = wasm_i64x2_splat(0);
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
        acc[r][2 * q] = step(acc[r][2 * q], xr[r], lo, &flags[kWhich ? 2 * q : 0]);
        acc[r][2 * q + 1] = step(acc[r][2 * q + 1], xr[r], hi, &flags[kWhich ? 2 * q + 1 : 0]);
      }
    }
  }
  uint32_t redo = 0;
  if (kWhich) {
    for (size_t p = 0; p < 2 * kQuads; ++p) {
      redo |= (wasm_i64x2_extract_lane(flags[p], 0) != 0 ? 1u : 0u) << (2 * p);
      redo |= (wasm_i64x2_extract_lane(flags[p], 1) != 0 ? 1u : 0u) << (2 * p + 1);
    }
  } else if (wasm_v128_any_true(flags[0])) {
    return (1u << (4 * kQuads)) - 1u;
  }
  if (n0 >= w.columns) return 0;
  const size_t width = w.columns - n0 < 4 * kQuads ? w.columns - n0 : 4 * kQuads;
  const float low = a.relu ? 0.0f : -__builtin_huge_valf();
  for (size_t r = 0; r < kRows; ++r) {
    float out[4 * kQuads + 2];
    // Each store writes a pair and two zeros, which the next pair overwrites.
    for (size_t p = 0; p < 2 * kQuads; ++p) wasm_v128_store(out + 2 * p, wasm_f32x4_demote_f64x2_zero(acc[r][p]));
    for (size_t c = 0; c < width; ++c) out[c] = out[c] > low ? out[c] : low;  // the kernels' clamp
    std::memcpy(a.y + (m0 + r) * a.y_stride + n0, out, width * sizeof(float));
  }
  return redo;
}

// Columns c0 + j of block b (bit j of `columns`) for rows [m0, m0 + rows),
// each a chain of math::fma_f32 in depth order, as gemm_portable computes
// it (that loop, over the whole block, is ~4x slower per sum here).
void redo_columns(const GemmArgs& a, size_t m0, size_t rows, size_t b, size_t c0,
                  uint32_t columns) {
  const PackedWeights& w = *a.weights;
  const float low = a.relu ? 0.0f : -__builtin_huge_valf();
  for (size_t j = 0; columns >> j != 0; ++j) {
    const size_t n = b * kBlockColumns + c0 + j;
    if ((columns >> j & 1u) == 0 || n >= w.columns) continue;
    const float* column = w.blocks + b * w.depth * kBlockColumns + c0 + j;
    for (size_t r = m0; r < m0 + rows; ++r) {
      const float* x = a.x + r * a.x_stride;
      float acc = w.bias[n];
      for (size_t k = 0; k < w.depth; ++k) acc = math::fma_f32(x[k], column[k * kBlockColumns], acc);
      a.y[r * a.y_stride + n] = acc > low ? acc : low;
    }
  }
}

// A tile, and the columns a midpoint spoiled computed again.
template <size_t kRows, size_t kQuads>
void exact_tile(const GemmArgs& a, size_t m0, size_t b, size_t c0) {
  if (tile<kRows, kQuads, false>(a, m0, b, c0) == 0) return;
  redo_columns(a, m0, kRows, b, c0, tile<kRows, kQuads, true>(a, m0, b, c0));
}

}  // namespace

void gemm_wasm_simd(const GemmArgs& a, size_t first_block, size_t block_count) {
  const PackedWeights& w = *a.weights;
  bool tiny_x = false;
  for (size_t m = 0; m < a.rows && !tiny_x; ++m) tiny_x = has_tiny_values(a.x + m * a.x_stride, w.depth);
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    if (tiny_x || (w.tiny != TinyWeights::kNone &&
                   has_tiny_values(w.blocks + b * w.depth * kBlockColumns,
                                   w.depth * kBlockColumns))) {
      redo_columns(a, 0, a.rows, b, 0, (1u << kBlockColumns) - 1u);
      continue;
    }
    if (a.rows == 1) {
      exact_tile<1, 4>(a, 0, b, 0);
      continue;
    }
    for (size_t m = 0; m < a.rows; m += 2) {
      for (size_t c0 = 0; c0 < kBlockColumns; c0 += 8) {
        if (a.rows - m >= 2) {
          exact_tile<2, 2>(a, m, b, c0);
        } else {
          exact_tile<1, 2>(a, m, b, c0);
        }
      }
    }
  }
}

}  // namespace edgemt::kernels::f32
