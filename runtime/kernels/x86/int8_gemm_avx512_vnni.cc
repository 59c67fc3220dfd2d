// Int8 GEMM on AVX-512 VNNI (compiled with -mavx512f -mavx512bw -mavx512vl
// -mavx512vnni; chosen only when the CPU has them).
//
// vpdpbusd multiplies unsigned by signed bytes, 4 per 32-bit lane: the
// activations go in as xq + 128 (a sign-bit flip; codes of either limit)
// and the epilogue subtracts 128 · Σ_k wq per column, which the pack stores. A group of the packed
// weights is one 512-bit register: 16 columns × 4 depth.
//
// Tile: MR rows × NB blocks (16 columns each) of 32-bit accumulators,
// MR, NB <= 4 (16 of the 32 zmm registers): at batch-1 decoding (one row)
// four blocks give four independent dependency chains.
//
// A tile of 2-4 rows flips its rows' codes to unsigned once per chunk of
// depth, into a buffer on the stack, rather than once per broadcast in the
// inner loop, where the XOR took vector-pipe slots from vpdpbusd on Zen 4
// (BM_Int8GemmFullCodes, medians: M 320 K 256 N 1024 302 -> 345 GFLOP/s,
// M 20 K 256 N 768 317 -> 351).
#include "kernels/int8_gemm_variants.h"
#include "kernels/stream_prefetch.h"
#include "kernels/x86/int8_parts_avx512.h"

namespace edgemt::kernels::int8 {
namespace {

// bytes[0, count) ^ 0x80 into out: int8 codes as vpdpbusd's unsigned operand
// (xq + 128).
inline void flip_codes(const int8_t* bytes, size_t count, int8_t* out) {
  const __m512i flip = _mm512_set1_epi32(static_cast<int>(0x80808080u));
  map_codes_avx512(bytes, count, out, [flip](__m512i v) { return _mm512_xor_si512(v, flip); });
}

// Every loop over rows and blocks is unrolled before GCC 12 places the
// accumulator array: left to its own unrolling, GCC kept sum[][] in memory
// and shuttled it through other registers and the stack on every group
// (30 moves, a store and a reload per 16 vpdpbusd; a chain through memory
// that halved the tile's speed on an Intel Xeon, cpu family 6 model 207).
template <int MR, int NB>
void tile(const GemmArgs& a, size_t m0, size_t b0) {
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
  // One row (batch-1 decoding) keeps its one XOR per four vpdpbusd: there
  // the copy measured no faster (BM_Int8GemmFullCodes M 1), the weights'
  // loads set the pace.
  constexpr bool kCopy = MR > 1;
  const __m512i flip = _mm512_set1_epi32(static_cast<int>(0x80808080u));
  alignas(64) int8_t flipped[MR][kCopy ? kChunkGroupsAvx512 * kGroupDepth : 1];
  for (size_t g0 = 0; g0 < w.groups; g0 += kChunkGroupsAvx512) {
    const size_t groups = w.groups - g0 < kChunkGroupsAvx512 ? w.groups - g0 : kChunkGroupsAvx512;
    const int8_t* codes = x + g0 * kGroupDepth;  // row r's chunk: codes + r·xq_stride
    #pragma GCC unroll 4
    for (int r = 0; kCopy && r < MR; ++r) {
      flip_codes(codes + r * a.xq_stride, groups * kGroupDepth, flipped[r]);
    }
    const int8_t* chunk = block + g0 * kGroupBytes;
    for (size_t g = 0; g < groups; ++g) {
      // The first rows over these weights prefetch the next tile's.
      if (m0 == 0) prefetch_next_tile_group<NB>(chunk + g * kGroupBytes, block_stride);
      __m512i wv[NB];
      #pragma GCC unroll 4
      for (int nb = 0; nb < NB; ++nb) {
        wv[nb] = _mm512_load_si512(chunk + nb * block_stride + g * kGroupBytes);
      }
      #pragma GCC unroll 4
      for (int r = 0; r < MR; ++r) {
        const __m512i xv =
            kCopy ? _mm512_set1_epi32(static_cast<int>(load_group(flipped[r] + g * kGroupDepth)))
                  : _mm512_xor_si512(_mm512_set1_epi32(static_cast<int>(load_group(
                                         codes + r * a.xq_stride + g * kGroupDepth))),
                                     flip);
        #pragma GCC unroll 4
        for (int nb = 0; nb < NB; ++nb) sum[r][nb] = _mm512_dpbusd_epi32(sum[r][nb], xv, wv[nb]);
      }
    }
  }
  // The flip to unsigned added 128 to every code.
  store_dequantized_avx512<MR, NB>(a, m0, b0, sum, 128);
}

constexpr TileFunction kTiles[4][4] = {
    {tile<1, 1>, tile<1, 2>, tile<1, 3>, tile<1, 4>},
    {tile<2, 1>, tile<2, 2>, tile<2, 3>, tile<2, 4>},
    {tile<3, 1>, tile<3, 2>, tile<3, 3>, tile<3, 4>},
    {tile<4, 1>, tile<4, 2>, tile<4, 3>, tile<4, 4>},
};
constexpr size_t kMaxBlocks[4] = {4, 4, 4, 4};  // 16 accumulators at most

}  // namespace

void gemm_avx512_vnni(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_tiles(a, first_block, block_count, kTiles, kMaxBlocks);
}

}  // namespace edgemt::kernels::int8
