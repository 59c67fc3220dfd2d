// Int8 GEMM on AVX-512 without VNNI (compiled with -mavx512f -mavx512bw
// -mavx512vl -mavx512dq; chosen when the CPU has AVX-512 BW but no VNNI:
// Intel Skylake-SP/X, the Xeons of many cloud machines).
//
// The AVX2 kernel's arithmetic (int8_gemm_avx2.cc) on 512-bit registers:
// vpmaddubsw takes |xq| as the unsigned operand and w with x's sign as the
// signed one, so a pair is at most 2·127·127 = 32258 and never saturates,
// then vpmaddwd with ones sums pairs into 32-bit lanes. Exact for codes of
// either limit, so the same bits as every other kernel. AVX-512 has no
// vpsignb; the sign is one masked subtract (0 - w where x < 0, the mask from
// vpmovb2m on the broadcast codes, once per row and group): 4 operations
// per 64 multiply-adds, against the AVX2 kernel's 4 per 32
// (BM_Int8GemmFullCodes on an Intel Xeon, cpu family 6 model 207, with
// EDGEMT_CPU_FEATURES=avx512bw: M 128 K 512 N 58101 125 GFLOP/s against
// the avx2-vpsignb kernel's 109, M 32 K 256 N 8000 129 against 110).
// oneMKL's AVX-512 path takes 3 (unsigned activations, pairs that may
// saturate). A tile whose codes are all >= -2 (a ReLU's output) takes 3
// too, as in the AVX2 kernel: xq + 2 in [0, 129] as the unsigned operand
// and w as it is (pairs at most 2·129·127 = 32766), 2·Σ_k w taken out in
// the epilogue.
//
// Tile: MR rows × NB blocks (16 columns each) of 32-bit accumulators,
// MR, NB <= 4 (16 of the 32 zmm registers), as the AVX-512 VNNI kernel.
// A tile makes its rows' |xq| once per chunk of depth into a buffer on the
// stack and broadcasts them from there.
//
// The activation quantizers are the AVX2 ones (the same bits; AVX-512
// CPUs have AVX2).
#include "kernels/int8_gemm_variants.h"
#include "kernels/x86/int8_parts_avx512.h"

namespace edgemt::kernels::int8 {
namespace {

// The offset that makes codes in [-2, 127] vpmaddubsw's unsigned operands
// with exact pairs (weights are in [-127, 127], pack_weights).
constexpr int32_t kReluOffset = 2;

// The unsigned operands of bytes[0, count) into out (count is a multiple of
// kGroupDepth): xq + kReluOffset with kOffsetCodes, else |xq|.
template <bool kOffsetCodes>
inline void unsigned_codes(const int8_t* bytes, size_t count, int8_t* out) {
  map_codes_avx512(bytes, count, out, [](__m512i v) {
    return kOffsetCodes ? _mm512_add_epi8(v, _mm512_set1_epi8(kReluOffset)) : _mm512_abs_epi8(v);
  });
}

// Whether every code of rows [m0, m0 + MR) is >= -kReluOffset (their zero
// padding past the depth is). Most rows that are not a ReLU's output return
// at their first 64 codes.
template <int MR>
bool codes_take_relu_offset(const GemmArgs& a, size_t m0) {
  const __m512i lowest = _mm512_set1_epi8(-kReluOffset);
  for (int r = 0; r < MR; ++r) {
    const int8_t* row = a.xq + (m0 + r) * a.xq_stride;
    size_t k = 0;
    for (; k + 64 <= a.xq_stride; k += 64) {
      if (_mm512_cmplt_epi8_mask(_mm512_loadu_si512(row + k), lowest) != 0) return false;
    }
    if (k < a.xq_stride) {
      const __mmask64 tail = (~0ULL) >> (64 - (a.xq_stride - k));
      if (_mm512_mask_cmplt_epi8_mask(tail, _mm512_maskz_loadu_epi8(tail, row + k), lowest) != 0) {
        return false;
      }
    }
  }
  return true;
}

// Every loop over rows and blocks is unrolled before GCC places the
// accumulator array (see int8_gemm_avx512_vnni.cc: left to itself GCC 12
// kept such arrays in memory).
template <int MR, int NB, bool kOffsetCodes>
void tile_of(const GemmArgs& a, size_t m0, size_t b0) {
  const PackedWeights& w = *a.weights;
  const size_t block_stride = w.groups * kGroupBytes;
  const int8_t* block = w.blocks + b0 * block_stride;
  __m512i sum[MR][NB];
  #pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    #pragma GCC unroll 4
    for (int nb = 0; nb < NB; ++nb) sum[r][nb] = _mm512_setzero_si512();
  }
  const int8_t* x = a.xq + m0 * a.xq_stride;
  const __m512i ones = _mm512_set1_epi16(1);
  const __m512i zero = _mm512_setzero_si512();
  alignas(64) int8_t magnitudes[MR][kChunkGroupsAvx512 * kGroupDepth];
  for (size_t g0 = 0; g0 < w.groups; g0 += kChunkGroupsAvx512) {
    const size_t groups = w.groups - g0 < kChunkGroupsAvx512 ? w.groups - g0 : kChunkGroupsAvx512;
    const int8_t* codes = x + g0 * kGroupDepth;  // row r's chunk: codes + r·xq_stride
    #pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
      unsigned_codes<kOffsetCodes>(codes + r * a.xq_stride, groups * kGroupDepth, magnitudes[r]);
    }
    const int8_t* chunk = block + g0 * kGroupBytes;
    for (size_t g = 0; g < groups; ++g) {
      __m512i wv[NB];
      #pragma GCC unroll 4
      for (int nb = 0; nb < NB; ++nb) {
        wv[nb] = _mm512_load_si512(chunk + nb * block_stride + g * kGroupBytes);
      }
      #pragma GCC unroll 4
      for (int r = 0; r < MR; ++r) {
        const __m512i magnitude =
            _mm512_set1_epi32(static_cast<int>(load_group(magnitudes[r] + g * kGroupDepth)));
        // Lanes whose code is negative (none with offset codes): the group's
        // 4 codes broadcast like the weights' 4-deep groups, so the mask
        // lines up with them.
        const __mmask64 negative =
            kOffsetCodes ? 0
                         : _mm512_movepi8_mask(_mm512_set1_epi32(static_cast<int>(
                               load_group(codes + r * a.xq_stride + g * kGroupDepth))));
        #pragma GCC unroll 4
        for (int nb = 0; nb < NB; ++nb) {
          const __m512i signed_w =
              kOffsetCodes ? wv[nb] : _mm512_mask_sub_epi8(wv[nb], negative, zero, wv[nb]);
          const __m512i pairs = _mm512_maddubs_epi16(magnitude, signed_w);
          sum[r][nb] = _mm512_add_epi32(sum[r][nb], _mm512_madd_epi16(pairs, ones));
        }
      }
    }
  }
  // The codes went in as they are, or + kReluOffset.
  store_dequantized_avx512<MR, NB>(a, m0, b0, sum, kOffsetCodes ? kReluOffset : 0);
}

template <int MR, int NB>
void tile(const GemmArgs& a, size_t m0, size_t b0) {
  if (codes_take_relu_offset<MR>(a, m0)) {
    tile_of<MR, NB, true>(a, m0, b0);
  } else {
    tile_of<MR, NB, false>(a, m0, b0);
  }
}

constexpr TileFunction kTiles[4][4] = {
    {tile<1, 1>, tile<1, 2>, tile<1, 3>, tile<1, 4>},
    {tile<2, 1>, tile<2, 2>, tile<2, 3>, tile<2, 4>},
    {tile<3, 1>, tile<3, 2>, tile<3, 3>, tile<3, 4>},
    {tile<4, 1>, tile<4, 2>, tile<4, 3>, tile<4, 4>},
};
constexpr size_t kMaxBlocks[4] = {4, 4, 4, 4};  // 16 accumulators at most

}  // namespace

void gemm_avx512bw(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_tiles(a, first_block, block_count, kTiles, kMaxBlocks);
}

}  // namespace edgemt::kernels::int8
