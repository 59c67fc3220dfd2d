// Marian's saturating int8 sums (int8_gemm_marian.h) with AVX2 (compiled
// with -mavx2; run by every x86 CPU that has it, AVX-512 ones included:
// the saturation is defined on 16-bit lanes, not on a register width).
//
// One row × 8 columns (half a block) at a time. A packed group half is 8
// columns × 4 depths (32 bytes); vpmaddubsw of it gives, per column, the
// pairs (4g, 4g+1) and (4g+2, 4g+3), Marian's lanes 2g mod L and 2g+1 mod L
// (k/2 mod L). So group g adds into accumulator g mod L/2 (L/2 registers
// of 8 columns × 2 lanes) with vpaddsw, as intgemm does, in the order of
// its steps; at the end vpmaddwd with ones adds each column's two lanes and
// the accumulators add in int32, exactly.
// Shifted products: vpmaddubsw(x + 127, w) saturates each pair, vpmaddwd
// widens, and the pairs add in int32.
#include <immintrin.h>

#include "kernels/int8_gemm_marian.h"
#include "kernels/int8_gemm_variants.h"

namespace edgemt::kernels::int8 {
namespace {

inline __m256i broadcast_group(const int8_t* p) {
  return _mm256_set1_epi32(static_cast<int>(load_group(p)));
}

// The 8 columns' int32 sums (unshifted) of half h of `block` for row x.
template <int kLanes>
void lane_sums(const int8_t* x, const int8_t* block, size_t groups, int h, int32_t* out) {
  constexpr int kAccumulators = kLanes / 2;
  __m256i acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm256_setzero_si256();
  const int8_t* half = block + 32 * h;
  for (size_t g0 = 0; g0 < groups; g0 += kAccumulators) {
    // Unrolled, so that every accumulator stays a register.
#pragma GCC unroll 16
    for (int j = 0; j < kAccumulators; ++j) {
      const size_t g = g0 + static_cast<size_t>(j);
      if (g == groups) break;
      const __m256i xg = broadcast_group(x + g * kGroupDepth);
      const __m256i wv = _mm256_load_si256(reinterpret_cast<const __m256i*>(half + g * kGroupBytes));
      const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(xg), _mm256_sign_epi8(wv, xg));
      acc[j] = _mm256_adds_epi16(acc[j], pairs);
    }
  }
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i total = _mm256_setzero_si256();
  for (int j = 0; j < kAccumulators; ++j) total = _mm256_add_epi32(total, _mm256_madd_epi16(acc[j], ones));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), total);
}

// The same for a shifted product: pairs of (x + shift)·w saturated alone.
void shifted_pair_sums(const int8_t* x, const int8_t* block, size_t groups, int h, int32_t shift,
                       int32_t* out) {
  const __m256i offset = _mm256_set1_epi8(static_cast<char>(shift));
  const __m256i ones = _mm256_set1_epi16(1);
  const int8_t* half = block + 32 * h;
  __m256i total = _mm256_setzero_si256();
  for (size_t g = 0; g < groups; ++g) {
    // x in [-127, 127], so x + 127 in [0, 254]: an unsigned byte.
    const __m256i xu = _mm256_add_epi8(broadcast_group(x + g * kGroupDepth), offset);
    const __m256i wv = _mm256_load_si256(reinterpret_cast<const __m256i*>(half + g * kGroupBytes));
    total = _mm256_add_epi32(total, _mm256_madd_epi16(_mm256_maddubs_epi16(xu, wv), ones));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), total);
}

}  // namespace

void gemm_marian_avx2(const GemmArgs& a, size_t first_block, size_t block_count) {
  const PackedWeights& w = *a.weights;
  GemmArgs epilogue = a;  // S already holds a shifted product's shift
  epilogue.sum_shift = 0;
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    const int8_t* block = w.blocks + b * w.groups * kGroupBytes;
    const size_t n0 = b * kBlockColumns;
    for (size_t m = 0; m < a.rows; ++m) {
      const int8_t* x = a.xq + m * a.xq_stride;
      int32_t sums[kBlockColumns];
      for (int h = 0; h < 2; ++h) {
        int32_t* out = sums + 8 * h;
        if (a.sum_shift != 0) {
          shifted_pair_sums(x, block, w.groups, h, a.sum_shift, out);
        } else if (a.saturating_lanes == kSsse3Lanes) {
          lane_sums<kSsse3Lanes>(x, block, w.groups, h, out);
        } else if (a.saturating_lanes == kAvx2Lanes) {
          lane_sums<kAvx2Lanes>(x, block, w.groups, h, out);
        } else {
          lane_sums<kAvx512bwLanes>(x, block, w.groups, h, out);
        }
      }
      dequantize_row(epilogue, m, n0, sums, kBlockColumns);
    }
  }
}

}  // namespace edgemt::kernels::int8
