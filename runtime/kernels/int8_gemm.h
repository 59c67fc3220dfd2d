// Int8 GEMM with dynamic activation quantization (the Int8PerRowDynamic
// scheme of schema/edgemt.fbs):
//
//   y[m, n] = float(Σ_k xq[m, k] · wq[n, k]) · (x_scale[m] · w_scale[n]) + bias[n]
//             (then max(y, 0) when ReLU is fused)
//
// wq: the file's per-output-row symmetric int8 weights, in [-127, 127].
// xq, x_scale: each input row quantized on the fly (quantize_rows below), to
// codes in [-127, 127] or [-64, 64] (kFullCodes, kNarrowCodes below).
// The sum is exact in int32 (|Σ| ≤ 127·127·K < 2^31 for K < 133,000), and the
// three float roundings (scale product, multiply, add) happen in this order
// in every variant, so portable, AVX2, AVX-512 VNNI and NEON (dot-product or
// not) kernels produce the same bits.
//
// Packed weight layout (built once at load by pack_weights): output columns
// in blocks of 16, depth in groups of 4; block b, group g is 64 bytes
//
//   block[b].group[g][c][j] = wq[16·b + c][4·g + j]     c < 16, j < 4
//
// (zero past N or K). A group is 16 32-bit lanes of 4 int8: one VNNI
// vpdpbusd (u8·s8), one 256-bit AVX2 pair, four NEON SDOT registers.
// Per column the pack also stores scale, bias and Σ_k wq (the correction the
// u8 kernels need: VNNI multiplies unsigned activations, so it uses xq + 128
// and subtracts 128·Σ_k wq; AVX2 with narrow codes uses xq + 64).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt::kernels::int8 {

// The largest activation code, one of two. 127 uses all of int8. 64 gives
// up one bit of the activations so that AVX2's vpmaddubsw (u8 · s8, pairs
// summed into saturating int16) can take xq + 64 in [0, 128] as its
// unsigned operand: a pair is at most 2·128·127 = 32512 < 32767, exact, at
// 3 instructions per 32 multiply-adds; with 127 it needs the sign trick and
// 4-5 (x86/int8_gemm_avx2.cc), except in the groups of 4 where a row pair's
// codes are small (w + 128 as the unsigned operand) or all >= 0 (a ReLU's
// output, its zero groups skipped; x86/int8_full_codes_avx2.cc). Int8 models use full codes (Int8Linear via
// Linear::create_int8): narrow ones roughly double each projection's
// rounding error, which cost up to 1.4 BLEU on real Marian models
// (docs/int8-quality.md); the arg-max shortcut uses full ones too, as its
// bound grows with the activations' rounding error
// (layers/argmax_shortcut.h). Every kernel sums either exactly, so the bits
// stay the same on every CPU.
inline constexpr int32_t kFullCodes = 127;
inline constexpr int32_t kNarrowCodes = 64;

inline constexpr size_t kBlockColumns = 16;
inline constexpr size_t kGroupDepth = 4;
inline constexpr size_t kGroupBytes = kBlockColumns * kGroupDepth;  // 64

inline size_t round_up(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
// Depth of a quantized input row: K padded to whole groups.
inline size_t padded_depth(size_t depth) { return round_up(depth, kGroupDepth); }

// A packed weight matrix (views into one 64-byte-aligned allocation).
struct PackedWeights {
  const int8_t* blocks = nullptr;      // [block_count, groups, 16, 4]
  const float* scale = nullptr;        // [block_count·16], 0 in padding columns
  const float* bias = nullptr;         // [block_count·16], 0 without bias
  const int32_t* column_sum = nullptr; // [block_count·16] Σ_k wq[n, k]
  size_t columns = 0;                  // N
  size_t depth = 0;                    // K
  size_t groups = 0;                   // padded_depth(K) / 4
  size_t block_count = 0;              // ceil(N / 16)
};

// Bytes pack_weights needs for an [N, K] matrix.
size_t packed_bytes(size_t columns, size_t depth);

// Packs wq [N, K] (row-major, the file's layout), scale [N] and bias [N] (or
// nullptr) into `storage` (packed_bytes(N, K) bytes, 64-byte aligned).
// Returns false, leaving *out unset, if a weight is -128 (outside the
// symmetric range the kernels rely on).
[[nodiscard]] bool pack_weights(const int8_t* wq, const float* scale, const float* bias,
                                size_t columns, size_t depth, void* storage, PackedWeights* out);

// The same pack from rows produced on demand, so that a matrix made at load
// (e.g. quantized from f32) never exists whole in row-major form, nor is
// read twice: source(context, first, count, out, scale) writes rows [first,
// first + count) of wq into out ([count, depth]) and their scales into
// scale[0, count) (the caller's `scale` [N] from `first` on); it is called
// once per block of 16 rows, in order, before that block is packed. `rows`:
// scratch of 16·depth bytes. Returns false as pack_weights.
using RowSource = void (*)(void* context, size_t first_row, size_t row_count, int8_t* out,
                           float* scale);
[[nodiscard]] bool pack_weights_from(RowSource source, void* context, float* scale,
                                     const float* bias, size_t columns, size_t depth,
                                     int8_t* rows, void* storage, PackedWeights* out);

// A pack's codes as rows and back, in place: [block_count, groups, 16, 4]
// (the pack's layout) <-> [block_count·16, groups·4] (row n, its depth
// padded to whole groups with zeros, at n·groups·4; the padding columns'
// rows zero). `scratch`: one block, 16·groups·4 bytes. The pack's scales,
// biases and column sums are untouched. Load phase (ArgmaxShortcut).
void pack_codes_to_rows(int8_t* codes, size_t block_count, size_t groups, int8_t* scratch);
void rows_to_pack_codes(int8_t* codes, size_t block_count, size_t groups, int8_t* scratch);

// Quantizes each row of x [rows, depth] (row stride x_stride) symmetrically
// to codes in [-L, L], L = `limit` (kFullCodes or kNarrowCodes):
// scale[m] = max|x[m, :]| / L, xq[m, k] = round_half_even(x[m, k] · (L /
// max|x[m, :]|)), clamped to ±L; an all-zero row gets scale 0 and zeros; a
// row with inf or NaN gets scale NaN (the output row becomes NaN, on every
// CPU alike). xq: [rows, padded_depth(depth)], zero-padded past depth.
// With a `multiplier` [depth] (nullptr: none) every row is first multiplied
// by it, element by element in float32 (x[m, k] · multiplier[k], one
// rounding), and that product is what gets quantized: an int8 file's
// smoothing vector (schema/TENSORS.md, "Int8 files").
void quantize_rows(const float* x, size_t rows, size_t depth, size_t x_stride, int32_t limit,
                   const float* multiplier, int8_t* xq, float* scale);

// quantize_rows with one range for the whole tensor: every row's scale is
// max|x[:, :]| / L and its codes round_half_even(x[m, k] · (L / max|x[:, :]|)),
// clamped to ±L (with a multiplier, of the products as above). This is
// Marian's intgemm8 activation quantization (127 / max|A| over the whole
// product's input: schema/edgemt.fbs, Int8PerTensorDynamic); the GEMM then
// runs as for per-row codes. A tensor holding inf or NaN gives every row
// scale NaN, an all-zero one scale 0. GemmVariant::quantize_tensor gives
// the same bits with the CPU's vectors.
void quantize_tensor(const float* x, size_t rows, size_t depth, size_t x_stride, int32_t limit,
                     const float* multiplier, int8_t* xq, float* scale);

// quantize_rows with a fixed range instead of the input's: xq[m, k] =
// round_half_even(x[m, k] · inverse) clamped to ±L, scale[m] = 1 (the
// caller's weight scales hold the whole dequantization). This is
// browsermt Marian's int8 product with a model's precomputed activation
// multiplier ("alphas"; Int8PerTensorStatic): values beyond ±L / inverse
// saturate. A row holding inf or NaN gets scale NaN and zero codes.
// GemmVariant::quantize_fixed gives the same bits with the CPU's vectors.
void quantize_fixed(const float* x, size_t rows, size_t depth, size_t x_stride, int32_t limit,
                    const float* multiplier, float inverse, int8_t* xq, float* scale);

// One GEMM call's operands. The kernels compute columns of blocks
// [first_block, first_block + block_count) for every row.
struct GemmArgs {
  const int8_t* xq = nullptr;       // [rows, xq_stride] from quantize_rows
  size_t xq_stride = 0;             // padded_depth(K)
  const float* x_scale = nullptr;   // [rows]
  size_t rows = 0;
  const PackedWeights* weights = nullptr;
  float* y = nullptr;               // [rows, y_stride]; only columns < N are written
  size_t y_stride = 0;
  bool relu = false;
  int32_t code_limit = kFullCodes;  // the `limit` xq was quantized with
  // Added times each column's Σ_k wq to its exact sum before the float part:
  // 0, or 127 for Marian's shifted product (Int8PerTensorStatic: its
  // activations go in as unsigned codes + 127, which intgemm sums exactly on
  // VNNI and a corrected bias takes out again in float32; edgemt adds the
  // 127·Σ w back in int32 so that the float rounding is Marian's).
  int32_t sum_shift = 0;
  // 0: exact sums (every kernel here). 8, 16 or 32: the 16-bit saturating
  // sums of Marian's intgemm on SSSE3, AVX2 or AVX-512 BW, which only the
  // kernels of int8_gemm_marian.h compute (the others ignore it).
  int32_t saturating_lanes = 0;
};

using GemmKernel = void (*)(const GemmArgs& args, size_t first_block, size_t block_count);

// The portable kernel (any CPU; the reference the others are tested against).
void gemm_portable(const GemmArgs& args, size_t first_block, size_t block_count);

using QuantizeKernel = void (*)(const float* x, size_t rows, size_t depth, size_t x_stride,
                                int32_t limit, const float* multiplier, int8_t* xq,
                                float* scale);
using FixedQuantizeKernel = void (*)(const float* x, size_t rows, size_t depth, size_t x_stride,
                                     int32_t limit, const float* multiplier, float inverse,
                                     int8_t* xq, float* scale);

// The fastest kernel this CPU runs (see core/cpu_features.h), its name
// ("avx512-vnni", "avx2", "neon-dotprod", "neon", "portable"), the
// activation quantizer that goes with it (the same bits as quantize_rows),
// and its rough speed in multiply-adds per ns at the decoder's shapes, used
// only to decide whether a product is worth splitting over threads
// (core/parallel.h). x86 rates are edgemt_kernels_benchmark BM_Int8Gemm at
// M = 1 on this project's Zen 4 VM (VNNI ~100, AVX2 ~60, portable ~6); the
// NEON ones are estimates (no ARM hardware here, and qemu timings mean
// nothing).
struct GemmVariant {
  GemmKernel kernel = nullptr;
  const char* name = "";
  QuantizeKernel quantize = nullptr;         // quantize_rows' bits
  QuantizeKernel quantize_tensor = nullptr;  // quantize_tensor's bits
  FixedQuantizeKernel quantize_fixed = nullptr;  // quantize_fixed's bits
  size_t multiply_adds_per_ns = 1;
};

// Rough time of a [rows, depth] x [depth, columns] product on `variant`.
inline size_t gemm_nanoseconds(const GemmVariant& variant, size_t rows, size_t depth,
                               size_t columns) {
  return rows * depth * columns / variant.multiply_adds_per_ns;
}
GemmVariant best_gemm_kernel();

// Every kernel this CPU can run, fastest first (for tests and benchmarks).
// Returns how many were written to `out` (at most `capacity`).
size_t available_gemm_kernels(GemmVariant* out, size_t capacity);

}  // namespace edgemt::kernels::int8
