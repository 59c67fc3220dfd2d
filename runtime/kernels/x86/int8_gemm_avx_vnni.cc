// Int8 GEMM on AVX-VNNI (compiled with -mavx2 -mavxvnni; chosen when the CPU
// has AVX-VNNI but not AVX-512 VNNI: Intel Core from Alder Lake on, whose
// laptops and desktops have no AVX-512).
//
// AVX-VNNI is AVX-512 VNNI's vpdpbusd on 256-bit registers: unsigned by
// signed bytes, 4 per 32-bit lane, exact 32-bit sums. As in
// int8_gemm_avx512_vnni.cc the activations go in as xq + 128 (a sign-bit
// flip; codes of either limit) and the epilogue subtracts 128 · Σ_k wq per
// column, which the pack stores: one instruction per 32 multiply-adds where
// the AVX2 kernel needs four. A packed group (16 columns × 4 depth) is two
// 256-bit registers.
//
// Tiles: MR rows × NB blocks with MR·NB <= 4: 8 accumulators of the 16 ymm
// registers (there are no more without AVX-512), the rest for the weights
// and the rows' broadcasts.
//
// A tile of 2-4 rows flips its rows' codes once per chunk of depth into a
// buffer on the stack, as the AVX-512 kernel does, rather than once per
// broadcast.
#include <immintrin.h>

#include "kernels/int8_gemm_variants.h"
#include "kernels/x86/int8_epilogue_avx2.h"

namespace edgemt::kernels::int8 {
namespace {

// Groups of depth per flipped chunk: 1 KiB of codes per row on the stack.
constexpr size_t kChunkGroups = 256;

// bytes[0, count) ^ 0x80 into out (count a multiple of 4): int8 codes as
// vpdpbusd's unsigned operand (xq + 128).
inline void flip_codes(const int8_t* bytes, size_t count, int8_t* out) {
  const __m256i flip = _mm256_set1_epi32(static_cast<int>(0x80808080u));
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + i));
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + i), _mm256_xor_si256(v, flip));
  }
  for (; i < count; i += kGroupDepth) {
    const uint32_t group = load_group(bytes + i) ^ 0x80808080u;
    std::memcpy(out + i, &group, sizeof group);
  }
}

// The exact int32 sums Σ_k (xq + 128)·wq of MR rows × NB blocks from row m0,
// block b0, into sums[r][nb][half] (8 columns each). Its own function that
// stores the sums only at its end, with every loop over rows, blocks and
// halves unrolled: so GCC 12 keeps the accumulators in registers (checked
// in the assembly) rather than in memory, as it did for the AVX-512 tile.
template <int MR, int NB>
__attribute__((noinline)) void accumulate(const GemmArgs& a, size_t m0, size_t b0,
                                          int32_t (&sums)[MR][NB][2][8]) {
  static_assert(MR * NB <= 4, "8 accumulators at most");
  const PackedWeights& w = *a.weights;
  const size_t block_stride = w.groups * kGroupBytes;
  const int8_t* block = w.blocks + b0 * block_stride;
  __m256i sum[MR][NB][2];
  #pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    #pragma GCC unroll 4
    for (int nb = 0; nb < NB; ++nb) sum[r][nb][0] = sum[r][nb][1] = _mm256_setzero_si256();
  }
  const int8_t* x = a.xq + m0 * a.xq_stride;
  // One row (batch-1 decoding) flips in the broadcast: the weights' loads
  // set its pace.
  constexpr bool kCopy = MR > 1;
  const __m256i flip = _mm256_set1_epi32(static_cast<int>(0x80808080u));
  alignas(32) int8_t flipped[MR][kCopy ? kChunkGroups * kGroupDepth : 1];
  for (size_t g0 = 0; g0 < w.groups; g0 += kChunkGroups) {
    const size_t groups = w.groups - g0 < kChunkGroups ? w.groups - g0 : kChunkGroups;
    const int8_t* codes = x + g0 * kGroupDepth;  // row r's chunk: codes + r·xq_stride
    #pragma GCC unroll 4
    for (int r = 0; kCopy && r < MR; ++r) {
      flip_codes(codes + r * a.xq_stride, groups * kGroupDepth, flipped[r]);
    }
    const int8_t* chunk = block + g0 * kGroupBytes;
    for (size_t g = 0; g < groups; ++g) {
      __m256i xv[MR];
      #pragma GCC unroll 4
      for (int r = 0; r < MR; ++r) {
        xv[r] = kCopy ? _mm256_set1_epi32(static_cast<int>(load_group(flipped[r] + g * kGroupDepth)))
                      : _mm256_xor_si256(_mm256_set1_epi32(static_cast<int>(load_group(
                                             codes + r * a.xq_stride + g * kGroupDepth))),
                                         flip);
      }
      #pragma GCC unroll 4
      for (int nb = 0; nb < NB; ++nb) {
        const int8_t* group = chunk + nb * block_stride + g * kGroupBytes;
        #pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          const __m256i wv = _mm256_load_si256(reinterpret_cast<const __m256i*>(group + 32 * h));
          #pragma GCC unroll 4
          for (int r = 0; r < MR; ++r) sum[r][nb][h] = _mm256_dpbusd_avx_epi32(sum[r][nb][h], xv[r], wv);
        }
      }
    }
  }
  #pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    #pragma GCC unroll 4
    for (int nb = 0; nb < NB; ++nb) {
      #pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(sums[r][nb][h]), sum[r][nb][h]);
      }
    }
  }
}

template <int MR, int NB>
void tile(const GemmArgs& a, size_t m0, size_t b0) {
  alignas(32) int32_t sums[MR][NB][2][8];
  accumulate<MR, NB>(a, m0, b0, sums);
  store_dequantized_avx2<MR, NB>(a, m0, b0, sums, 128);  // the flip added 128 per code
}

constexpr TileFunction kTiles[4][4] = {
    {tile<1, 1>, tile<1, 2>, tile<1, 3>, tile<1, 4>},
    {tile<2, 1>, tile<2, 2>, nullptr, nullptr},
    {tile<3, 1>, nullptr, nullptr, nullptr},
    {tile<4, 1>, nullptr, nullptr, nullptr},
};
constexpr size_t kMaxBlocks[4] = {4, 2, 1, 1};  // per row count: MR·NB <= 4

}  // namespace

void gemm_avx_vnni(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_tiles(a, first_block, block_count, kTiles, kMaxBlocks);
}

}  // namespace edgemt::kernels::int8
