// The CPU-specific int8 GEMM kernels (int8_gemm.h has the contract), each in
// its own file compiled for its instruction set: x86/ (AVX2, AVX-VNNI,
// AVX-512 BW, AVX-512 VNNI) and arm/ (NEON, NEON dot product). Only the files of the target
// architecture are built; int8_gemm.cc picks one at run time.
#pragma once

#include <cstring>
#include <limits>

#include "kernels/int8_gemm.h"
#include "kernels/output_prefetch.h"

namespace edgemt::kernels::int8 {

// The 4 activation bytes of one group, as one 32-bit lane.
inline uint32_t load_group(const int8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// A row's scale and the factor its values are multiplied by, from the bit
// pattern of its max|x|, as quantize_rows computes them for codes in
// [-limit, limit]. False for the rows quantize_rows treats apart (all zero,
// inf/NaN, or max|x| so small that limit / max|x| overflows): the vector
// quantizers hand those to it.
inline bool regular_row_scale(uint32_t max_bits, int32_t limit, float* scale, float* inverse) {
  float max_abs;
  std::memcpy(&max_abs, &max_bits, sizeof max_abs);
  const float codes = static_cast<float>(limit);
  *inverse = codes / max_abs;
  if (max_bits == 0 || max_bits >= 0x7F800000u || *inverse > std::numeric_limits<float>::max()) {
    return false;
  }
  *scale = max_abs / codes;
  return true;
}

// A register tile: `rows` (MR) rows from m0, `blocks` (NB) blocks from b0.
using TileFunction = void (*)(const GemmArgs& args, size_t m0, size_t b0);

// Walks the output in tiles: four blocks at a time outer (their weights,
// 4·16·K bytes, stay in L1/L2 while every row passes over them), rows four
// at a time inner; a tile of r rows spans at most max_blocks[r - 1] blocks
// (what the registers hold). tiles[r - 1][nb - 1] computes r rows × nb
// blocks; entries for nb > max_blocks[r - 1] are never called.
//
// Each group of rows prefetches the output it writes in the next pass
// (output_prefetch.h).
inline void run_tiles(const GemmArgs& a, size_t first_block, size_t block_count,
                      const TileFunction (&tiles)[4][4], const size_t (&max_blocks)[4]) {
  const size_t end_block = first_block + block_count;
  const bool prefetch = a.rows >= kPrefetchOutputRows;
  for (size_t b = first_block; b < end_block; b += 4) {
    const size_t end = end_block - b < 4 ? end_block : b + 4;
    const size_t next_end = end_block - end < 4 ? end_block : end + 4;
    for (size_t m = 0; m < a.rows; m += 4) {
      const size_t mr = a.rows - m < 4 ? a.rows - m : 4;
      const size_t step = max_blocks[mr - 1];
      if (prefetch) {
        const size_t columns = a.weights->columns;
        prefetch_output(a.y, a.y_stride, m, mr, end * kBlockColumns,
                        next_end * kBlockColumns < columns ? next_end * kBlockColumns : columns);
      }
      for (size_t bb = b; bb < end; bb += step) {
        const size_t nb = end - bb < step ? end - bb : step;
        tiles[mr - 1][nb - 1](a, m, bb);
      }
    }
  }
}

// A row whose range regular_row_scale turns down (all zero, inf/NaN, or a
// max|x| so small that limit / max|x| overflows): scale 0 (NaN for inf/NaN)
// and zero codes, as quantize_rows defines them.
void quantize_irregular_row(uint32_t max_bits, size_t depth, int8_t* q, float* scale);

// A quantizer from its two parts: RowMax(row, depth, multiplier) -> the bit
// pattern of max|value| of one row, and Row(row, depth, limit, multiplier,
// inverse, q) -> the row's codes round_half_even(value · inverse) clamped
// to ±limit, zero-padded to padded_depth(depth). kPerTensor: every row with
// the range of all rows (quantize_tensor), else each with its own
// (quantize_rows). The scales, and the rows no regular range fits, are
// handled here, once for every instruction set.
using RowMaxBits = uint32_t (*)(const float* row, size_t depth, const float* multiplier);
using RowQuantizer = void (*)(const float* row, size_t depth, int32_t limit,
                              const float* multiplier, float inverse, int8_t* q);
template <RowMaxBits kRowMax, RowQuantizer kRow, bool kPerTensor>
void quantize_with(const float* x, size_t rows, size_t depth, size_t x_stride, int32_t limit,
                   const float* multiplier, int8_t* xq, float* scale) {
  const size_t stride = padded_depth(depth);
  uint32_t tensor_bits = 0;
  for (size_t m = 0; kPerTensor && m < rows; ++m) {
    const uint32_t bits = kRowMax(x + m * x_stride, depth, multiplier);
    tensor_bits = bits > tensor_bits ? bits : tensor_bits;
  }
  for (size_t m = 0; m < rows; ++m) {
    const float* row = x + m * x_stride;
    const uint32_t bits = kPerTensor ? tensor_bits : kRowMax(row, depth, multiplier);
    float inverse;
    if (regular_row_scale(bits, limit, scale + m, &inverse)) {
      kRow(row, depth, limit, multiplier, inverse, xq + m * stride);
    } else {
      quantize_irregular_row(bits, depth, xq + m * stride, scale + m);
    }
  }
}

// quantize_fixed from the same two parts: every row's codes with the given
// `inverse` (a fixed range, codes clamped to ±limit), scale 1; a row holding
// inf or NaN (RowMax says so) gets scale NaN and zero codes, as in
// quantize_rows.
template <RowMaxBits kRowMax, RowQuantizer kRow>
void quantize_fixed_with(const float* x, size_t rows, size_t depth, size_t x_stride,
                         int32_t limit, const float* multiplier, float inverse, int8_t* xq,
                         float* scale) {
  const size_t stride = padded_depth(depth);
  for (size_t m = 0; m < rows; ++m) {
    const float* row = x + m * x_stride;
    const uint32_t bits = kRowMax(row, depth, multiplier);
    if (bits >= 0x7F800000u) {
      quantize_irregular_row(bits, depth, xq + m * stride, scale + m);
    } else {
      kRow(row, depth, limit, multiplier, inverse, xq + m * stride);
      scale[m] = 1.0f;
    }
  }
}

// A column's exact sum with GemmArgs::sum_shift's term added (int32: both
// terms are at most 127·127·K).
inline int32_t shifted_sum(int32_t sum, const GemmArgs& args, size_t column) {
  return sum + args.sum_shift * args.weights->column_sum[column];
}

// Shared by every kernel: the float part, in one order (see int8_gemm.h).
inline float dequantize(int32_t sum, float x_scale, float w_scale, float bias, bool relu) {
  const float y = static_cast<float>(sum) * (x_scale * w_scale) + bias;
  return relu ? (y > 0.0f ? y : 0.0f) : y;
}

// Row m's outputs n0 .. n0 + width (those below N) from their exact sums
// [width]: the portable kernel's float part, one column at a time (the
// zero-skipping kernels, int8_gemm_sparse.h, whose sums come from a few
// groups).
inline void dequantize_row(const GemmArgs& a, size_t m, size_t n0, const int32_t* sums,
                           size_t width) {
  const PackedWeights& w = *a.weights;
  if (w.columns - n0 < width) width = w.columns - n0;
  float* yr = a.y + m * a.y_stride + n0;
  for (size_t c = 0; c < width; ++c) {
    yr[c] = dequantize(shifted_sum(sums[c], a, n0 + c), a.x_scale[m], w.scale[n0 + c],
                       w.bias[n0 + c], a.relu);
  }
}

#if defined(__x86_64__)
void gemm_avx2(const GemmArgs& args, size_t first_block, size_t block_count);
void gemm_avx2_vpsignb(const GemmArgs& args, size_t first_block, size_t block_count);
// Their full codes (x86/int8_full_codes_avx2.cc): with the xor/sub sign step
// and with vpsignb.
void gemm_full_codes_avx2(const GemmArgs& args, size_t first_block, size_t block_count);
void gemm_full_codes_avx2_vpsignb(const GemmArgs& args, size_t first_block, size_t block_count);
void gemm_avx512_vnni(const GemmArgs& args, size_t first_block, size_t block_count);
void gemm_avx512bw(const GemmArgs& args, size_t first_block, size_t block_count);
void gemm_avx_vnni(const GemmArgs& args, size_t first_block, size_t block_count);
// The two parts of quantize_rows and quantize_tensor (quantize_with) with
// AVX-512 (F, BW; x86/int8_quantize_avx512.cc), 16 values at a time, and
// with AVX2, 8 at a time: the same bits as the portable ones (whose loop
// compiles to SSE2 and took 5-6% of int8 batch-32 beam-4 time on a Zen 3
// VM).
uint32_t row_max_bits_avx512(const float* row, size_t depth, const float* multiplier);
void quantize_row_avx512(const float* row, size_t depth, int32_t limit, const float* multiplier,
                         float inverse, int8_t* q);
uint32_t row_max_bits_avx2(const float* row, size_t depth, const float* multiplier);
void quantize_row_avx2(const float* row, size_t depth, int32_t limit, const float* multiplier,
                       float inverse, int8_t* q);
// The first `groups` whole groups (4·groups <= depth) of a block of 16 rows
// (row c at rows + c·depth), group g's 64 bytes to out + 64·g: the pack's
// layout, 16 rows' 16 (AVX-512) or 8 (AVX2) groups at a time transposed in
// registers (kernels/x86/pack_avx512.cc). Also each row's sum over those
// bytes (sums [16]) and their minimum, or 0 if that is lower (lows [16]).
void pack_groups_avx512(const int8_t* rows, size_t depth, size_t groups, int8_t* out,
                        int32_t* sums, int8_t* lows);
void pack_groups_avx2(const int8_t* rows, size_t depth, size_t groups, int8_t* out,
                      int32_t* sums, int8_t* lows);
#endif
#if defined(__wasm_simd128__)
void gemm_wasm_simd(const GemmArgs& args, size_t first_block, size_t block_count);
#endif
#if defined(__aarch64__)
void gemm_neon(const GemmArgs& args, size_t first_block, size_t block_count);
void gemm_neon_dotprod(const GemmArgs& args, size_t first_block, size_t block_count);
#endif

}  // namespace edgemt::kernels::int8
