// The parts of the AVX2 int8 kernel's tiles that int8_gemm_avx2.cc (narrow
// codes, Marian's sums) and int8_full_codes_avx2.cc (full codes) share:
// the code steps that keep vpmaddubsw's pairs exact, a group's products
// for a tile, and the tile of offset codes (include only from files
// compiled with -mavx2; int8_gemm_avx2.cc's opening says why each step).
// `static`: each kernel file keeps its own copy, compiled for its own target.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/int8_gemm_variants.h"
#include "kernels/stream_prefetch.h"

namespace edgemt::kernels::int8 {

// Groups of depth per prepared chunk: 1 KiB of each row's operands on the
// stack.
constexpr size_t kChunkGroups = 256;

// What the tile does to the codes so that vpmaddubsw's pairs cannot
// saturate (above), or, for Marian's shifted sums, saturate as intgemm's do.
enum class CodeStep {
  kOffset,       // xq + offset as the unsigned operand (the tile's offset)
  kSignXorSub,   // full codes: |xq|, and w's sign flipped by xor and sub
  kSignVpsignb,  // full codes: |xq|, and vpsignb(w, xq)
};

// The codes of `groups` groups from codes (8 at most: 32 codes), zero past
// them; the copy only for a chunk's last 1-7 groups.
static inline __m256i load_groups8(const int8_t* codes, size_t groups) {
  if (groups >= 8) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes));
  alignas(32) int8_t tail[32] = {};
  std::memcpy(tail, codes, groups * kGroupDepth);
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(tail));
}

// Bytes of one row's prepared operands per chunk of depth.
constexpr size_t kChunkBytes = kChunkGroups * kGroupDepth;

// The offset that makes codes in [-2, 127] vpmaddubsw's unsigned operands
// with exact pairs: 2·129·127 = 32766 <= 32767 (weights are in [-127, 127],
// pack_weights).
constexpr int32_t kReluOffset = 2;

// The unsigned operands xq + offset of count codes, 32 at a time (count is
// a multiple of kGroupDepth).
static inline void prepare_offset_codes(const int8_t* codes, size_t count, int32_t code_offset,
                                        uint8_t* unsigned_out) {
  const __m256i offset = _mm256_set1_epi8(static_cast<char>(code_offset));
  for (size_t i = 0; i < count; i += 32) {  // the last 1-7 groups zero-padded
    const __m256i v = load_groups8(codes + i, (count - i) / kGroupDepth);
    _mm256_store_si256(reinterpret_cast<__m256i*>(unsigned_out + i), _mm256_add_epi8(v, offset));
  }
}

// One group's products for MR rows × NB blocks, added to sum[r][nb][half]
// (8 columns each): `group` is the group's 64 bytes in the first block,
// unsigned_x[r] row r's 4 unsigned operands broadcast, sign[r] its sign
// masks (kSignXorSub) or codes (kSignVpsignb). Each 32-byte half of the
// group's weights is loaded once for all rows.
template <CodeStep kStep, int MR, int NB>
static inline void add_products(const int8_t* group, size_t block_stride,
                                const __m256i (&unsigned_x)[MR], const __m256i (&sign)[MR],
                                __m256i ones, __m256i (&sum)[MR][NB][2]) {
  for (int nb = 0; nb < NB; ++nb) {
    for (int h = 0; h < 2; ++h) {
      const __m256i wv =
          _mm256_load_si256(reinterpret_cast<const __m256i*>(group + nb * block_stride + 32 * h));
      for (int r = 0; r < MR; ++r) {
        // w with x's sign: (w ^ m) - m negates where m is all ones;
        // vpsignb also zeroes w where x is 0, whose |x| is 0 anyway.
        __m256i signed_w = wv;
        if constexpr (kStep == CodeStep::kSignXorSub) {
          signed_w = _mm256_sub_epi8(_mm256_xor_si256(wv, sign[r]), sign[r]);
        } else if constexpr (kStep == CodeStep::kSignVpsignb) {
          signed_w = _mm256_sign_epi8(wv, sign[r]);
        }
        const __m256i pairs = _mm256_maddubs_epi16(unsigned_x[r], signed_w);
        sum[r][nb][h] = _mm256_add_epi32(sum[r][nb][h], _mm256_madd_epi16(pairs, ones));
      }
    }
  }
}

template <int MR, int NB>
static inline void store_sums(const __m256i (&sum)[MR][NB][2], int32_t (&sums)[MR][NB][2][8]) {
  for (int r = 0; r < MR; ++r) {
    for (int nb = 0; nb < NB; ++nb) {
      for (int h = 0; h < 2; ++h) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(sums[r][nb][h]), sum[r][nb][h]);
      }
    }
  }
}

// The int32 sums of MR (1 or 2) rows × NB blocks from row m0, block b0,
// of xq + offset, into sums[r][nb][half]: exact for the offsets of narrow
// codes and a ReLU's, Marian's saturated pairs for xq + 127. The rows'
// broadcasts are loaded first, then each 32-byte half of a group's weights
// once for both rows: at most 8 accumulators, 2 row registers, the weights
// and `ones` (of 16).
// Its own function, storing the sums only at its end: with the float
// epilogue in the same function GCC 12 kept some accumulators on the stack,
// or copied them every step (4 rows × 1 block did so in any arrangement);
// this way its loops have neither (objdump).
template <int MR, int NB>
static __attribute__((noinline)) void accumulate_offset(const GemmArgs& a, size_t m0,
                                                        size_t b0, int32_t offset,
                                                        int32_t (&sums)[MR][NB][2][8]) {
  static_assert(MR <= 2 && MR * NB <= 4, "8 accumulators at most");
  const PackedWeights& w = *a.weights;
  const size_t block_stride = w.groups * kGroupBytes;
  const int8_t* block = w.blocks + b0 * block_stride;
  __m256i sum[MR][NB][2];
  for (int r = 0; r < MR; ++r) {
    for (int nb = 0; nb < NB; ++nb) sum[r][nb][0] = sum[r][nb][1] = _mm256_setzero_si256();
  }
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i no_sign[MR] = {};
  const int8_t* x = a.xq + m0 * a.xq_stride;
  // Each row's unsigned operands, made once per chunk of depth for the
  // tile (prepare_codes) and broadcast from there: the loop below then
  // spends its vector ALU slots on the products only.
  alignas(32) uint8_t unsigned_codes[MR][kChunkBytes];
  for (size_t g0 = 0; g0 < w.groups; g0 += kChunkGroups) {
    const size_t groups = w.groups - g0 < kChunkGroups ? w.groups - g0 : kChunkGroups;
    for (int r = 0; r < MR; ++r) {
      prepare_offset_codes(x + r * a.xq_stride + g0 * kGroupDepth, groups * kGroupDepth, offset,
                           unsigned_codes[r]);
    }
    const int8_t* chunk = block + g0 * kGroupBytes;
    for (size_t g = 0; g < groups; ++g) {
      // The first rows over these weights prefetch the next tile's.
      if (m0 == 0) prefetch_next_tile_group<NB>(chunk + g * kGroupBytes, block_stride);
      __m256i unsigned_x[MR];
      for (int r = 0; r < MR; ++r) {
        unsigned_x[r] = _mm256_set1_epi32(static_cast<int>(load_group(
            reinterpret_cast<const int8_t*>(unsigned_codes[r]) + g * kGroupDepth)));
      }
      add_products<CodeStep::kOffset, MR, NB>(chunk + g * kGroupBytes, block_stride, unsigned_x,
                                              no_sign, ones, sum);
    }
  }
  store_sums<MR, NB>(sum, sums);
}

}  // namespace edgemt::kernels::int8
