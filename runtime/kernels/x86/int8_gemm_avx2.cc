// Int8 GEMM on AVX2 (compiled with -mavx2; chosen when the CPU has AVX2 but
// neither AVX-512 VNNI nor AVX-VNNI).
//
// AVX2 has no 4-way byte dot product with 32-bit sums; vpmaddubsw (u8·s8 ->
// s16 pairs, saturating) followed by vpmaddwd with ones is the usual pair.
// vpmaddubsw must not saturate, so that every sum stays exact:
//   - Narrow codes (xq in [-64, 64], int8_gemm.h): it gets xq + 64 in
//     [0, 128] as the unsigned operand and w as the signed one, a pair is at
//     most 2·128·127 = 32512 < 32767, and the epilogue subtracts 64·Σ_k w.
//     3 instructions per 32 multiply-adds.
//   - Full codes (xq in [-127, 127], what int8 models use): it gets |x| as
//     the unsigned operand and w with x's sign applied as the signed one: a
//     pair is at most 2·127·127 = 32258. Two ways to apply the sign, the
//     same sums, one variant each (the faster first on each vendor's CPUs,
//     int8_gemm.cc):
//       "avx2": (w ^ m) - m with m = 0xFF where x < 0. On Zen, vpsignb
//       shares the two multiply pipes with vpmaddubsw and vpmaddwd, the
//       xor and sub run on all four (edgemt_kernels_benchmark
//       BM_Int8GemmFullCodes/M:128/K:256/N:8000, Zen 4 running the AVX2
//       kernel: vpsignb 121, xor and sub 135 GFLOP/s; the narrow path 183).
//       "avx2-vpsignb": vpsignb(w, x). Intel has three vector ports, the
//       multiplies on two of them: 4 operations per 32 multiply-adds, 3 on
//       the multiply ports (1.5 cycles), beat 5 on any port (1.67; the same
//       benchmark on an Intel Xeon, cpu family 6 model 207: xor and sub
//       100-101, vpsignb 111-112 GFLOP/s).
//   Full codes run pair of rows by pair of rows, group by group of 4
//   depth, with w + 128 as the unsigned operand and the codes as they are
//   where both rows' codes are small (two such groups summed in 16 bits
//   before one vpmaddwd), and skip the groups a ReLU's output leaves zero
//   (int8_full_codes_avx2.cc): the sign step only where it is needed.
// Marian's shifted product without VNNI (gemm_marian_shifted_avx2,
// int8_gemm_marian.h) is the offset step with xq + 127 for full codes:
// there vpmaddubsw's saturation of a pair is the arithmetic asked for.
// A packed group (16 columns × 4 depth) is two 256-bit registers.
//
// A tile makes its rows' unsigned operands (and sign masks) once per chunk
// of depth into buffers on the stack and broadcasts them from there, rather
// than computing them in the loop from each broadcast code: 2-3 fewer ALU
// operations per row and group, which the multiplies' loop is short of on
// Intel's three vector ports (BM_Int8GemmFullCodes, AVX2 kernel on an Intel
// Xeon, cpu family 6 model 207: M 128 K 256 N 8000 86-91 -> 99 GFLOP/s,
// M 4 83-87 -> 92-94).
//
// Tiles: MR rows × NB blocks with MR·NB <= 4 (8 of the 16 ymm registers as
// accumulators): one row takes four blocks, two rows two (a 2 × 2 tile
// needs half the abs operations per multiply-add of a 4 × 1 one: the 4-row
// groups run_tiles walks are two of them; BM_Int8Gemm, Zen 3 VM: 1-11%
// faster than the 4 × 1 tiles at M = 1-320, full codes).
//
// Also the activation quantizer that goes with it (quantize_rows' bits).
#include <immintrin.h>

#include "kernels/int8_gemm_marian.h"
#include "kernels/int8_gemm_variants.h"
#include "kernels/x86/avx2_math.h"
#include "kernels/x86/int8_epilogue_avx2.h"
#include "kernels/x86/int8_tiles_avx2.h"

namespace edgemt::kernels::int8 {
namespace {

// The codes run_tiles' tiles are given (full codes run through
// gemm_full_codes_avx2, int8_full_codes_avx2.cc).
enum class Codes {
  kNarrow,         // xq + 64 (narrow codes: [-64, 64])
  kMarianShifted,  // xq + 127, saturating pairs (Marian's sums)
};

template <Codes kCodes, int MR, int NB>
void tile(const GemmArgs& a, size_t m0, size_t b0) {
  static_assert(kCodes == Codes::kNarrow || kCodes == Codes::kMarianShifted,
                "full codes run through split_rows");
  alignas(32) int32_t sums[MR][NB][2][8];
  // What the sums hold on top of Σ xq·w, offset·Σ_k w, the epilogue takes
  // out again (all but Marian's shift, which stays in).
  const int32_t offset = kCodes == Codes::kNarrow ? kNarrowCodes : kFullCodes;
  accumulate_offset<MR, NB>(a, m0, b0, offset, sums);
  store_dequantized_avx2<MR, NB>(a, m0, b0, sums, offset);
}

// run_tiles' groups of 3 and 4 rows, as tiles of 2 rows and 1 or 2 (the
// blocks' weights come from L1 for the second).
template <Codes kCodes, int NB>
void three_rows(const GemmArgs& a, size_t m0, size_t b0) {
  tile<kCodes, 2, NB>(a, m0, b0);
  tile<kCodes, 1, NB>(a, m0 + 2, b0);
}
template <Codes kCodes, int NB>
void four_rows(const GemmArgs& a, size_t m0, size_t b0) {
  tile<kCodes, 2, NB>(a, m0, b0);
  tile<kCodes, 2, NB>(a, m0 + 2, b0);
}

template <Codes kCodes>
constexpr TileFunction kTiles[4][4] = {
    {tile<kCodes, 1, 1>, tile<kCodes, 1, 2>, tile<kCodes, 1, 3>, tile<kCodes, 1, 4>},
    {tile<kCodes, 2, 1>, tile<kCodes, 2, 2>, nullptr, nullptr},
    {three_rows<kCodes, 1>, three_rows<kCodes, 2>, nullptr, nullptr},
    {four_rows<kCodes, 1>, four_rows<kCodes, 2>, nullptr, nullptr},
};
constexpr size_t kMaxBlocks[4] = {4, 2, 2, 2};  // per row count

// xq = clamp(round_half_even(x · inverse), ±limit) on 8 lanes, as int32.
inline __m256i quantize8(__m256 x, __m256 inverse, __m256 limit) {
  const __m256 v = _mm256_round_ps(_mm256_mul_ps(x, inverse), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 negative_limit = _mm256_sub_ps(_mm256_setzero_ps(), limit);
  return _mm256_cvtps_epi32(_mm256_max_ps(_mm256_min_ps(v, limit), negative_limit));
}

// The 8 values from row + k the quantizer works on: x, or x · multiplier
// when there is one (one float32 product, as quantize_rows; a branch the
// predictor always gets right), in full or masked to a tail.
inline __m256 load8(const float* row, const float* multiplier, size_t k) {
  const __m256 v = _mm256_loadu_ps(row + k);
  return multiplier != nullptr ? _mm256_mul_ps(v, _mm256_loadu_ps(multiplier + k)) : v;
}
inline __m256 load8_masked(const float* row, const float* multiplier, size_t k, __m256i mask) {
  const __m256 v = _mm256_maskload_ps(row + k, mask);
  return multiplier != nullptr ? _mm256_mul_ps(v, _mm256_maskload_ps(multiplier + k, mask)) : v;
}

}  // namespace

// max|value| of a row on the bit patterns, as the portable loop (inf/NaN
// largest; masked-off lanes load 0, which changes no max).
uint32_t row_max_bits_avx2(const float* row, size_t depth, const float* multiplier) {
  const size_t full = depth / 8 * 8;
  const __m256i magnitude = _mm256_set1_epi32(0x7FFFFFFF);
  __m256i max_bits = _mm256_and_si256(
      _mm256_castps_si256(load8_masked(row, multiplier, full, avx2::tail_mask(depth - full))),
      magnitude);
  for (size_t k = 0; k < full; k += 8) {
    max_bits = _mm256_max_epu32(
        max_bits, _mm256_and_si256(_mm256_castps_si256(load8(row, multiplier, k)), magnitude));
  }
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), max_bits);
  uint32_t bits = 0;
  for (uint32_t lane : lanes) bits = lane > bits ? lane : bits;
  return bits;
}

// One row's codes with `inverse_value` (quantize_with), quantize_rows' bits.
void quantize_row_avx2(const float* row, size_t depth, int32_t limit, const float* multiplier,
                       float inverse_value, int8_t* q) {
  const __m256 codes = _mm256_set1_ps(static_cast<float>(limit));
  const __m256 inverse = _mm256_set1_ps(inverse_value);
  size_t k = 0;
  for (; k + 32 <= depth; k += 32) {
    // int32 -> int16 -> int8 packs work within 128-bit halves: bytes come
    // out as [a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7], put back in order.
    const __m256i ab = _mm256_packs_epi32(quantize8(load8(row, multiplier, k), inverse, codes),
                                          quantize8(load8(row, multiplier, k + 8), inverse, codes));
    const __m256i cd = _mm256_packs_epi32(quantize8(load8(row, multiplier, k + 16), inverse, codes),
                                          quantize8(load8(row, multiplier, k + 24), inverse, codes));
    const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, cd),
                                                      _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + k), bytes);
  }
  for (; k < depth; k += 8) {
    const size_t count = depth - k < 8 ? depth - k : 8;
    const __m256 v = load8_masked(row, multiplier, k, avx2::tail_mask(count));
    alignas(32) int32_t values[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(values), quantize8(v, inverse, codes));
    for (size_t i = 0; i < count; ++i) q[k + i] = static_cast<int8_t>(values[i]);
  }
  for (size_t p = depth; p < padded_depth(depth); ++p) q[p] = 0;
}

void gemm_avx2(const GemmArgs& a, size_t first_block, size_t block_count) {
  if (a.code_limit <= kNarrowCodes) {
    run_tiles(a, first_block, block_count, kTiles<Codes::kNarrow>, kMaxBlocks);
  } else {
    gemm_full_codes_avx2(a, first_block, block_count);
  }
}

void gemm_marian_shifted_avx2(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_tiles(a, first_block, block_count, kTiles<Codes::kMarianShifted>, kMaxBlocks);
}

void gemm_avx2_vpsignb(const GemmArgs& a, size_t first_block, size_t block_count) {
  if (a.code_limit <= kNarrowCodes) {
    run_tiles(a, first_block, block_count, kTiles<Codes::kNarrow>, kMaxBlocks);
  } else {
    gemm_full_codes_avx2_vpsignb(a, first_block, block_count);
  }
}

}  // namespace edgemt::kernels::int8
