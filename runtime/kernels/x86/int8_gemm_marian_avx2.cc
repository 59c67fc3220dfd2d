// Marian's saturating int8 sums (int8_gemm_marian.h) with AVX2 (compiled
// with -mavx2; run by every x86 CPU that has it, AVX-512 ones included:
// the saturation is defined on 16-bit lanes, not on a register width).
//
// Unshifted, 16 lanes (AVX2's own) or 32 (AVX-512 BW's), 4 rows or more:
// intgemm's loop itself.
// Each half-block (8 columns) is transposed once into 8 rows of depth on
// the stack (group g of the pack holds a column's depths 4g..4g+3, so 8
// groups transposed as 32-bit elements are one 32-depth register step of
// each column), then every row runs register steps of 32 codes: |x| once,
// per column (w ^ m) - m with m x's sign mask, vpmaddubsw, vpaddsw into that
// column's 16 lanes; a row without negative codes (a ReLU's) skips |x| and
// the sign. At the end vpmaddwd with ones and horizontal adds, exactly.
// BM_MarianInt8Gemm M 320 on Zen 4: 131-140 GFLOP/s (180 on a ReLU's
// codes), where the one-row kernel below ran 91-112. 32 lanes are two
// 16-lane accumulators per column, 4 columns at a time (BM_MarianInt8Gemm
// M 320, Zen 5: 113-227 GFLOP/s, 16 lanes 120-248); on the one-row kernel a
// tiny11 student's int8 batch 32 with `--marian-int8-sums avx512bw` ran
// 446 sentences/s, 0.95x Marian's speed, here 541.
// Fewer rows, and SSSE3's 8 lanes: one row × one block at a time. A
// packed group half is 8 columns × 4 depths (32 bytes); vpmaddubsw of it
// gives, per column, the pairs (4g, 4g+1) and (4g+2, 4g+3), Marian's lanes
// 2g mod L and 2g+1 mod L (k/2 mod L). So group g adds into accumulator
// g mod L/2 (L/2 registers of 8 columns × 2 lanes) with vpaddsw, as intgemm
// does, in the order of its steps; at the end vpmaddwd with ones adds each
// column's two lanes and the accumulators add in int32, exactly.
// The L/2 accumulators of 8 columns leave no registers to reuse a broadcast
// code for the other half, or a weight for another row: 2 loads and 4
// operations (vpabsb, vpsignb, vpmaddubsw, vpaddsw) per 32 multiply-adds.
// Shifted products saturate each pair alone, whatever L: the AVX2 int8
// kernel's tiles do that (gemm_marian_shifted_avx2, x86/int8_gemm_avx2.cc),
// faster than the exact kernel (no sign step).
#include <immintrin.h>

#include "kernels/int8_gemm_marian.h"
#include "kernels/int8_gemm_variants.h"
#include "kernels/x86/avx2_math.h"
#include "kernels/x86/code_floor_avx2.h"
#include "kernels/x86/int8_epilogue_avx2.h"

namespace edgemt::kernels::int8 {
namespace {

// Adds group g of a half-block (8 columns × 4 depths at `half`) for row x
// into acc with saturation: vpmaddubsw(|x|, w with x's sign), as intgemm.
inline void add_group(const int8_t* x, const int8_t* half, size_t g, __m256i* acc) {
  const __m256i xg = _mm256_set1_epi32(static_cast<int>(load_group(x + g * kGroupDepth)));
  const __m256i wv = _mm256_load_si256(reinterpret_cast<const __m256i*>(half + g * kGroupBytes));
  *acc = _mm256_adds_epi16(*acc, _mm256_maddubs_epi16(_mm256_abs_epi8(xg), _mm256_sign_epi8(wv, xg)));
}

// The int32 sums of row x against both halves of `block` into sums[0][0].
// Whole register steps in an unrolled loop with no branch (a branch there
// cost the accumulators their registers), the last partial one after it.
template <int kLanes>
__attribute__((noinline)) void lane_sums(const int8_t* x, const int8_t* block, size_t groups,
                                         int32_t (&sums)[1][1][2][8]) {
  constexpr size_t kAccumulators = kLanes / 2;
  const __m256i ones = _mm256_set1_epi16(1);
  for (int h = 0; h < 2; ++h) {
    const int8_t* half = block + 32 * h;
    __m256i acc[kAccumulators];
    for (__m256i& a : acc) a = _mm256_setzero_si256();
    size_t g0 = 0;
    for (; g0 + kAccumulators <= groups; g0 += kAccumulators) {
#pragma GCC unroll 16
      for (size_t j = 0; j < kAccumulators; ++j) add_group(x, half, g0 + j, &acc[j]);
    }
    const size_t tail = groups - g0;
#pragma GCC unroll 16
    for (size_t j = 0; j < kAccumulators; ++j) {
      if (j < tail) add_group(x, half, g0 + j, &acc[j]);
    }
    __m256i total = _mm256_setzero_si256();
    for (const __m256i& a : acc) total = _mm256_add_epi32(total, _mm256_madd_epi16(a, ones));
    _mm256_store_si256(reinterpret_cast<__m256i*>(sums[0][0][h]), total);
  }
}

template <int kLanes>
void lane_gemm(const GemmArgs& a, size_t first_block, size_t block_count) {
  const PackedWeights& w = *a.weights;
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    const int8_t* block = w.blocks + b * w.groups * kGroupBytes;
    for (size_t m = 0; m < a.rows; ++m) {
      alignas(32) int32_t sums[1][1][2][8];
      lane_sums<kLanes>(a.xq + m * a.xq_stride, block, w.groups, sums);
      store_dequantized_avx2<1, 1>(a, m, b, sums, 0);
    }
  }
}

// intgemm's own steps for 16 and 32 lanes, on a transposed copy of the
// weights (below).
constexpr size_t kStepDepth = 32;   // depths per step (2 · 16 lanes: one AVX2 register)
constexpr size_t kHalfColumns = 8;  // columns per half-block
// Deepest product transposed: 8 columns × 2048 depths, 16 KiB of stack (as
// much as any kernel here takes); deeper ones run one row at a time.
constexpr size_t kMaxTransposedDepth = 2048;
// Fewest rows worth the transposition, which costs about two rows' steps
// (BM_MarianInt8Gemm).
constexpr size_t kMinTransposedRows = 4;

// Half h of block b (8 columns) as 8 rows of steps · 32 depths, zero past
// the pack's groups: out[c · steps · 32 + k] = w[column c][k]. Group g of
// the half holds column c's depths 4g..4g+3 at bytes 4c, so 8 groups
// transposed as 32-bit elements make one register step of each column.
void transpose_half(const PackedWeights& w, size_t b, size_t h, size_t steps, int8_t* out) {
  const int8_t* half = w.blocks + b * w.groups * kGroupBytes + 32 * h;
  const size_t row_bytes = steps * kStepDepth;
  for (size_t t = 0; t < steps; ++t) {
    __m256 v[8];  // 32-bit words moved, not computed on
    for (size_t q = 0; q < 8; ++q) {
      const size_t g = 8 * t + q;
      v[q] = g < w.groups ? _mm256_load_ps(reinterpret_cast<const float*>(half + g * kGroupBytes))
                          : _mm256_setzero_ps();
    }
    avx2::transpose8(v);
    for (size_t c = 0; c < kHalfColumns; ++c) {
      _mm256_store_ps(reinterpret_cast<float*>(out + c * row_bytes + t * kStepDepth), v[c]);
    }
  }
}

// Lane sums of 8 registers as one: element c = Σ of v[c]'s 8 (exact).
inline __m256i sum_each(const __m256i (&v)[8]) {
  const __m256i h0123 = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  const __m256i h4567 = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(h0123, h4567, 0x20),
                          _mm256_permute2x128_si256(h0123, h4567, 0x31));
}

// One register step of row codes xv (32 codes, step t) against kColumns
// transposed columns into their 16-lane accumulators: intgemm's loop, |x|
// once, then per column the sign, vpmaddubsw and vpaddsw. A row without
// negative codes (a ReLU's) needs neither |x| nor the sign: the same pairs,
// |x|·(w with x's sign) being x·w.
template <bool kNonnegative, size_t kColumns>
__attribute__((always_inline)) inline void add_step(__m256i (&acc)[kColumns], __m256i xv,
                                                    const int8_t* column_step, size_t row_bytes) {
  const __m256i magnitude = kNonnegative ? xv : _mm256_abs_epi8(xv);
  const __m256i negative = _mm256_cmpgt_epi8(_mm256_setzero_si256(), xv);
#pragma GCC unroll 8
  for (size_t c = 0; c < kColumns; ++c) {
    const __m256i wv = _mm256_load_si256(reinterpret_cast<const __m256i*>(column_step + c * row_bytes));
    // w with x's sign: (w ^ m) - m negates where m is all ones (xor and sub
    // run on all four of Zen's vector pipes, vpsignb on two).
    const __m256i signed_w = kNonnegative ? wv : _mm256_sub_epi8(_mm256_xor_si256(wv, negative), negative);
    acc[c] = _mm256_adds_epi16(acc[c], _mm256_maddubs_epi16(magnitude, signed_w));
  }
}

// Row x's sums against kColumns transposed columns of `steps` steps of 32
// codes (3-4 operations per 32 multiply-adds; 2 for a ReLU's codes) into
// widened[c] (8 int32 lanes each, added exactly). Marian's register of L
// lanes is kParts = L / 16 steps: its lanes 16p..16p+15 hold the pairs of
// step t where t mod kParts = p, so step t adds into accumulator t mod
// kParts of each column, every lane in intgemm's order. 8 accumulators:
// 8 columns at 16 lanes, 4 at 32.
template <bool kNonnegative, size_t kColumns, size_t kParts>
__attribute__((noinline)) void transposed_sums(const int8_t* x, size_t stride,
                                               const int8_t* columns, size_t steps,
                                               __m256i* widened) {
  static_assert(kColumns * kParts == 8, "8 accumulators");
  const size_t row_bytes = steps * kStepDepth;
  __m256i acc[kParts][kColumns];
#pragma GCC unroll 8
  for (size_t p = 0; p < kParts; ++p) {
    for (size_t c = 0; c < kColumns; ++c) acc[p][c] = _mm256_setzero_si256();
  }
  auto step = [&](size_t t, __m256i xv) {
    add_step<kNonnegative, kColumns>(acc[t % kParts], xv, columns + t * kStepDepth, row_bytes);
  };
  auto load_step = [x](size_t t) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + t * kStepDepth));
  };
  // Whole register steps in a loop with no branch (a branch there cost the
  // accumulators their registers), then the row's last codes, masked (zero
  // pairs add nothing).
  const size_t whole = stride / kStepDepth < steps ? stride / kStepDepth : steps;
  size_t t = 0;
  for (; t + kParts <= whole; t += kParts) {
#pragma GCC unroll 2
    for (size_t p = 0; p < kParts; ++p) {
      add_step<kNonnegative, kColumns>(acc[p], load_step(t + p), columns + (t + p) * kStepDepth,
                                       row_bytes);
    }
  }
  for (; t < whole; ++t) step(t, load_step(t));
  if (whole < steps) {  // stride is a multiple of 4: whole 32-bit lanes
    const __m256i mask = avx2::tail_mask((stride - whole * kStepDepth) / kGroupDepth);
    step(whole, _mm256_maskload_epi32(reinterpret_cast<const int*>(x + whole * kStepDepth), mask));
  }
  const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 8
  for (size_t c = 0; c < kColumns; ++c) {
    widened[c] = _mm256_madd_epi16(acc[0][c], ones);
    for (size_t p = 1; p < kParts; ++p) {
      widened[c] = _mm256_add_epi32(widened[c], _mm256_madd_epi16(acc[p][c], ones));
    }
  }
}

// Row x's 8 sums against a half-block's 8 transposed columns, for Marian's
// registers of kLanes lanes (16 or 32).
template <int kLanes>
inline __m256i half_sums(const int8_t* x, size_t stride, bool nonnegative, const int8_t* columns,
                         size_t steps) {
  constexpr size_t kParts = kLanes / 16;
  constexpr size_t kColumns = kHalfColumns / kParts;
  const size_t row_bytes = steps * kStepDepth;
  __m256i widened[kHalfColumns];
  for (size_t c0 = 0; c0 < kHalfColumns; c0 += kColumns) {
    if (nonnegative) {
      transposed_sums<true, kColumns, kParts>(x, stride, columns + c0 * row_bytes, steps, widened + c0);
    } else {
      transposed_sums<false, kColumns, kParts>(x, stride, columns + c0 * row_bytes, steps, widened + c0);
    }
  }
  return sum_each(widened);
}

// Rows whose codes are checked for a sign at a time: 1 KiB of flags.
constexpr size_t kCheckedRows = 1024;

// Unshifted sums with kLanes 16 or 32 for a.rows >= kMinTransposedRows and depths
// up to kMaxTransposedDepth: each half-block transposed once per
// kCheckedRows rows, then every row through intgemm's loop. The float part
// is the exact kernels'.
template <int kLanes>
void transposed_gemm(const GemmArgs& a, size_t first_block, size_t block_count) {
  const PackedWeights& w = *a.weights;
  const size_t steps = (w.groups * kGroupDepth + kStepDepth - 1) / kStepDepth;
  alignas(32) int8_t columns[kHalfColumns * kMaxTransposedDepth];
  bool nonnegative[kCheckedRows];
  for (size_t m0 = 0; m0 < a.rows; m0 += kCheckedRows) {
    const size_t rows = a.rows - m0 < kCheckedRows ? a.rows - m0 : kCheckedRows;
    for (size_t r = 0; r < rows; ++r) {
      nonnegative[r] = codes_at_least(a.xq + (m0 + r) * a.xq_stride, a.xq_stride, 0);
    }
    for (size_t b = first_block; b < first_block + block_count; ++b) {
      for (size_t h = 0; h < 2; ++h) {
        const size_t n = b * kBlockColumns + h * kHalfColumns;
        if (n >= w.columns) break;
        transpose_half(w, b, h, steps, columns);
        const __m256 w_scale = _mm256_load_ps(w.scale + n);
        const __m256 bias = _mm256_load_ps(w.bias + n);
        const size_t count = w.columns - n < kHalfColumns ? w.columns - n : kHalfColumns;
        for (size_t r = 0; r < rows; ++r) {
          const int8_t* x = a.xq + (m0 + r) * a.xq_stride;
          const __m256i sum = half_sums<kLanes>(x, a.xq_stride, nonnegative[r], columns, steps);
          store_dequantized8_avx2(a, m0 + r, n, sum, _mm256_setzero_si256(), w_scale, bias, count);
        }
      }
    }
  }
}

}  // namespace

void gemm_marian_avx2(const GemmArgs& a, size_t first_block, size_t block_count) {
  if (a.sum_shift != 0) {
    gemm_marian_shifted_avx2(a, first_block, block_count);
  } else if (a.saturating_lanes == kSsse3Lanes) {
    lane_gemm<kSsse3Lanes>(a, first_block, block_count);
  } else {
    const bool transposed =
        a.rows >= kMinTransposedRows && a.weights->groups * kGroupDepth <= kMaxTransposedDepth;
    if (a.saturating_lanes == kAvx2Lanes) {
      transposed ? transposed_gemm<kAvx2Lanes>(a, first_block, block_count)
                 : lane_gemm<kAvx2Lanes>(a, first_block, block_count);
    } else {
      transposed ? transposed_gemm<kAvx512bwLanes>(a, first_block, block_count)
                 : lane_gemm<kAvx512bwLanes>(a, first_block, block_count);
    }
  }
}

}  // namespace edgemt::kernels::int8
