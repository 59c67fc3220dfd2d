// Marian's saturating int8 sums (int8_gemm_marian.h) with AVX2 (compiled
// with -mavx2; run by every x86 CPU that has it, AVX-512 ones included:
// the saturation is defined on 16-bit lanes, not on a register width).
//
// Unshifted: one row × one block (two halves of 8 columns) at a time. A
// packed group half is 8 columns × 4 depths (32 bytes); vpmaddubsw of it
// gives, per column, the pairs (4g, 4g+1) and (4g+2, 4g+3), Marian's lanes
// 2g mod L and 2g+1 mod L (k/2 mod L). So group g adds into accumulator
// g mod L/2 (L/2 registers of 8 columns × 2 lanes) with vpaddsw, as intgemm
// does, in the order of its steps; at the end vpmaddwd with ones adds each
// column's two lanes and the accumulators add in int32, exactly.
// The L/2 accumulators of 8 columns leave no registers to reuse a broadcast
// code for the other half, or a weight for another row: 2 loads and 4
// operations (vpabsb, vpsignb, vpmaddubsw, vpaddsw) per 32 multiply-adds,
// where the exact kernel loads less. Made from a row's |x| and sign masks
// prepared once, as the exact kernel's operands are (xor and sub for the
// sign), it needed 3 loads and ran slower (M 320, K 256, N 1536 on Zen 4:
// 75 against 103 GFLOP/s, BM_MarianInt8Gemm).
// Shifted products saturate each pair alone, whatever L: the AVX2 int8
// kernel's tiles do that (gemm_marian_shifted_avx2, x86/int8_gemm_avx2.cc),
// faster than the exact kernel (no sign step).
#include <immintrin.h>

#include "kernels/int8_gemm_marian.h"
#include "kernels/int8_gemm_variants.h"
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

}  // namespace

void gemm_marian_avx2(const GemmArgs& a, size_t first_block, size_t block_count) {
  if (a.sum_shift != 0) {
    gemm_marian_shifted_avx2(a, first_block, block_count);
  } else if (a.saturating_lanes == kSsse3Lanes) {
    lane_gemm<kSsse3Lanes>(a, first_block, block_count);
  } else if (a.saturating_lanes == kAvx2Lanes) {
    lane_gemm<kAvx2Lanes>(a, first_block, block_count);
  } else {
    lane_gemm<kAvx512bwLanes>(a, first_block, block_count);
  }
}

}  // namespace edgemt::kernels::int8
