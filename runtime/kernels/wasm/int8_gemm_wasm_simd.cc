// The int8 GEMM with WebAssembly SIMD (128-bit), for the browser build
// (platforms/wasm): the same exact int32 sums as the portable kernel, then
// its float epilogue (dequantize()), so the same bits.
//
// A packed group (kernels/int8_gemm.h) is 16 columns x 4 depths, 64 bytes:
// columns c and c+1 are 8 consecutive bytes. v128.load8x8_s widens them to
// i16 [c:k0..k3, c+1:k0..k3]; i32x4.dot_i16x8_s against the row's 4 codes
// (i16, twice) gives [c: k0k1, c: k2k3, c+1: k0k1, c+1: k2k3] (each product
// at most 127·127, pairs exact in int32). Eight such accumulators cover the
// block's 16 columns; adjacent lanes are added at the end.
#include <wasm_simd128.h>

#include "kernels/int8_gemm_variants.h"

namespace edgemt::kernels::int8 {
namespace {

// The most groups whose codes a call widens once per row (64 KiB of
// depth): deeper rows widen each group as they go.
constexpr size_t kWidenedGroups = 1024;

// One group's 4 codes as i16, twice: [x0 x1 x2 x3 x0 x1 x2 x3].
inline v128_t widen_group(const int8_t* codes) {
  return wasm_i16x8_extend_low_i8x16(wasm_i32x4_splat(static_cast<int32_t>(load_group(codes))));
}

// Block b's 16 sums for one row; x: the row's codes, widened per group
// (nullptr: widen them here).
void block_row(const PackedWeights& w, size_t b, const int8_t* xr, const v128_t* x,
               int32_t* sums) {
  const int8_t* block = w.blocks + b * w.groups * kGroupBytes;
  v128_t acc[8];
  for (v128_t& v : acc) v = wasm_i32x4_splat(0);
  for (size_t g = 0; g < w.groups; ++g) {
    const v128_t codes = x != nullptr ? x[g] : widen_group(xr + g * kGroupDepth);
    const int8_t* group = block + g * kGroupBytes;
    for (size_t p = 0; p < 8; ++p) {
      const v128_t pair = wasm_i16x8_load8x8(group + p * 8);  // columns 2p, 2p+1
      acc[p] = wasm_i32x4_add(acc[p], wasm_i32x4_dot_i16x8(pair, codes));
    }
  }
  for (size_t p = 0; p < 8; p += 2) {
    // [2p: k0k1, k2k3, 2p+1: ..] and [2p+2: .., 2p+3: ..] -> 4 column sums.
    const v128_t even = wasm_i32x4_shuffle(acc[p], acc[p + 1], 0, 2, 4, 6);
    const v128_t odd = wasm_i32x4_shuffle(acc[p], acc[p + 1], 1, 3, 5, 7);
    wasm_v128_store(sums + 2 * p, wasm_i32x4_add(even, odd));
  }
}

void store_block(const GemmArgs& a, const PackedWeights& w, size_t b, size_t m,
                 const int32_t* sums) {
  const size_t n0 = b * kBlockColumns;
  const size_t width = w.columns - n0 < kBlockColumns ? w.columns - n0 : kBlockColumns;
  float* yr = a.y + m * a.y_stride + n0;
  for (size_t c = 0; c < width; ++c) {
    yr[c] = dequantize(shifted_sum(sums[c], a, n0 + c), a.x_scale[m], w.scale[n0 + c],
                       w.bias[n0 + c], a.relu);
  }
}

}  // namespace

void gemm_wasm_simd(const GemmArgs& a, size_t first_block, size_t block_count) {
  const PackedWeights& w = *a.weights;
  const size_t end = first_block + block_count;
  alignas(16) int32_t sums[kBlockColumns];
  if (a.rows == 1 && w.groups <= kWidenedGroups) {
    // A decoder step's single row against many blocks: its codes widened
    // once for all of them.
    v128_t x[kWidenedGroups];
    for (size_t g = 0; g < w.groups; ++g) x[g] = widen_group(a.xq + g * kGroupDepth);
    for (size_t b = first_block; b < end; ++b) {
      block_row(w, b, a.xq, x, sums);
      store_block(a, w, b, 0, sums);
    }
    return;
  }
  for (size_t b = first_block; b < end; ++b) {
    for (size_t m = 0; m < a.rows; ++m) {
      block_row(w, b, a.xq + m * a.xq_stride, nullptr, sums);
      store_block(a, w, b, m, sums);
    }
  }
}

}  // namespace edgemt::kernels::int8
