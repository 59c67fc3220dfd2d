// Int8 GEMM on AVX-512 without VNNI (compiled with -mavx512f -mavx512bw
// -mavx512vl -mavx512dq; chosen when the CPU has AVX-512 BW but no VNNI:
// Intel Skylake-SP/X, the Xeons of many cloud machines).
//
// The AVX2 kernel's arithmetic (int8_gemm_avx2.cc, int8_full_codes_avx2.cc)
// on 512-bit registers: vpmaddubsw (u8·s8 -> s16 pairs, saturating), then
// vpmaddwd with ones sums pairs into 32-bit lanes, and every pair stays
// exact, so the same bits as every other kernel. Per tile of MR rows, a
// chunk of depth at a time, by the rows' codes:
//   - any codes (full codes, [-127, 127]): the split. Groups of 4 depth
//     where every row's codes are within ±64 (narrow groups; 80% of a
//     4-row tile's in a Marian student's encoder, tiny11 int8 batch 32)
//     take xq + 64 in [0, 128] as the unsigned operand and w as it is (a
//     pair at most 2·128·127 = 32512): 3 operations per 64 multiply-adds.
//     The others (wide groups) take |xq| and w with x's sign, one masked
//     subtract (0 - w where x < 0, the mask from vpmovb2m on the broadcast
//     codes; AVX-512 has no vpsignb): 4 operations, and add 64·Σ w of
//     their weights, so that every sum holds 64·Σ_k w for the epilogue to
//     take out. A tile whose groups are mostly wide takes the sign step
//     on all of them, without the correction. oneMKL's AVX-512 path takes
//     3 operations (unsigned activations, pairs that may saturate).
//   - codes all >= 0 (a ReLU's output): as they are (a pair at most
//     2·127·127), skipping the groups zero in every row (half of a 4-row
//     tile's in the same encoder's second feed-forward product).
//   - codes all >= -2: xq + 2 in [0, 129] (a pair at most 2·129·127 =
//     32766), every group.
// edgemt_kernels_benchmark with EDGEMT_CPU_FEATURES=avx512bw on an Intel
// Xeon, cpu family 6 model 167, GFLOP/s: BM_Int8GemmNormalizedCodes M 32
// K 256 N 1536 140-142 -> 156-170 (layer-normalized rows), FullCodes M 32
// K 256 N 8000 (codes spread over ±127, all wide) 130-136 -> 126-133.
//
// Tile: MR rows × NB blocks (16 columns each) of 32-bit accumulators,
// MR, NB <= 4 (16 of the 32 zmm registers), as the AVX-512 VNNI kernel.
// A tile makes its rows' operands once per chunk of depth into buffers on
// the stack and broadcasts them from there.
//
// The activation quantizers are the AVX2 ones (the same bits; AVX-512
// CPUs have AVX2).
#include <type_traits>

// int8_parts_avx512.h first: it includes immintrin.h around GCC 12's
// warnings on it (code_floor_avx2.h would include it bare).
#include "kernels/x86/int8_parts_avx512.h"
#include "kernels/int8_gemm_variants.h"
#include "kernels/stream_prefetch.h"
#include "kernels/x86/code_floor_avx2.h"
#include "kernels/x86/nonzero_list.h"

namespace edgemt::kernels::int8 {
namespace {

// The offset that makes codes in [-2, 127] vpmaddubsw's unsigned operands
// with exact pairs (weights are in [-127, 127], pack_weights).
constexpr int32_t kReluOffset = 2;

// Bytes of one row's prepared operands per chunk of depth.
constexpr size_t kChunkBytesAvx512 = kChunkGroupsAvx512 * kGroupDepth;

// How a tile's rows of codes go into vpmaddubsw (above).
enum class TileCodes {
  kNonnegative,  // all >= 0 (a ReLU's): as they are, skipping groups zero in every row
  kOffsetTwo,    // all >= -2: xq + 2, every group
  kFull,         // any: the split into narrow and wide groups
};

// A chunk of depth of a tile's MR rows of codes, prepared for its
// products: the narrow operands xq + 64 and the magnitudes |xq| (kFull;
// kOffsetTwo's xq + 2 go where the narrow ones do), and the chunk's
// groups listed in order as narrow (every row's codes within ±64; with
// kNonnegative: not zero in every row) or wide.
template <int MR>
struct TileChunk {
  alignas(64) int8_t narrow_codes[MR][kChunkBytesAvx512];
  alignas(64) int8_t magnitudes[MR][kChunkBytesAvx512];
  // Group indices (x86::append_nonzero_lanes16 writes 16 at a time: slack).
  uint32_t narrow_groups[kChunkGroupsAvx512 + 16];
  uint32_t wide_groups[kChunkGroupsAvx512 + 16];
  size_t narrow_count = 0;
  size_t wide_count = 0;
  // The buffers as add_group's operands.
  const int8_t* narrow_operands[MR];
  const int8_t* magnitude_operands[MR];

  TileChunk() {
    for (int r = 0; r < MR; ++r) {
      narrow_operands[r] = narrow_codes[r];
      magnitude_operands[r] = magnitudes[r];
    }
  }
};

// Bit j: group j of a 64-code slice holds a byte set in `bytes`.
inline __mmask16 groups_with(__mmask64 bytes) {
  const __m512i v = _mm512_movm_epi8(bytes);
  return _mm512_test_epi32_mask(v, v);
}

// The `groups` groups of rows[r] (from a chunk's start), 16 at a time:
// operands and lists for kFull.
template <int MR>
void prepare_split(const int8_t* const (&rows)[MR], size_t groups, TileChunk<MR>& c) {
  const __m512i narrow = _mm512_set1_epi8(static_cast<char>(kNarrowCodes));
  c.narrow_count = c.wide_count = 0;
  for (size_t g = 0; g < groups; g += 16) {
    const size_t count = groups - g < 16 ? groups - g : 16;
    const __mmask64 tail = (~0ULL) >> (64 - count * kGroupDepth);
    const size_t i = g * kGroupDepth;
    __mmask64 beyond = 0;  // bytes where some row's |xq| > 64
    #pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
      const __m512i v = _mm512_maskz_loadu_epi8(tail, rows[r] + i);
      const __m512i magnitude = _mm512_abs_epi8(v);
      _mm512_store_si512(c.narrow_codes[r] + i, _mm512_add_epi8(v, narrow));
      _mm512_store_si512(c.magnitudes[r] + i, magnitude);
      beyond |= _mm512_cmpgt_epi8_mask(magnitude, narrow);
    }
    const __mmask16 here = static_cast<__mmask16>((1u << count) - 1u);
    const __mmask16 wide = groups_with(beyond);
    c.narrow_count = x86::append_nonzero_lanes16(static_cast<__mmask16>(~wide & here), g,
                                                 c.narrow_groups, c.narrow_count);
    c.wide_count = x86::append_nonzero_lanes16(wide, g, c.wide_groups, c.wide_count);
  }
}

// The groups of rows[r] (codes >= 0) not zero in every row, as the narrow
// list: in a Marian student's encoder half of a 4-row tile's groups of the
// second feed-forward product's input are zero.
template <int MR>
void prepare_nonzero(const int8_t* const (&rows)[MR], size_t groups, TileChunk<MR>& c) {
  c.narrow_count = c.wide_count = 0;
  for (size_t g = 0; g < groups; g += 16) {
    const size_t count = groups - g < 16 ? groups - g : 16;
    const __mmask64 tail = (~0ULL) >> (64 - count * kGroupDepth);
    __m512i any = _mm512_setzero_si512();
    #pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
      any = _mm512_or_si512(any, _mm512_maskz_loadu_epi8(tail, rows[r] + g * kGroupDepth));
    }
    c.narrow_count = x86::append_nonzero_lanes16(_mm512_test_epi32_mask(any, any), g,
                                                 c.narrow_groups, c.narrow_count);
  }
}

// Group g's products for MR rows × NB blocks added to sum: the group's 64
// bytes in the first block at `group`, row r's unsigned operands broadcast
// from operands[r], and with kSigned w negated where row r's code (from
// codes[r]) is negative; with kPairSums also Σ of each pair of the
// group's weights per block into pair_sums (16-bit lanes).
template <int MR, int NB, bool kSigned, bool kPairSums>
inline __attribute__((always_inline)) void add_group(const int8_t* group, size_t block_stride,
                                                     const int8_t* const (&operands)[MR],
                                                     const int8_t* const (&codes)[MR], size_t g,
                                                     __m512i (&sum)[MR][NB],
                                                     __m512i (&pair_sums)[NB]) {
  const __m512i ones = _mm512_set1_epi16(1);
  const __m512i zero = _mm512_setzero_si512();
  __m512i wv[NB];
  #pragma GCC unroll 4
  for (int nb = 0; nb < NB; ++nb) {
    wv[nb] = _mm512_load_si512(group + nb * block_stride);
    if (kPairSums) {
      pair_sums[nb] = _mm512_add_epi16(pair_sums[nb], _mm512_maddubs_epi16(_mm512_set1_epi8(1), wv[nb]));
    }
  }
  #pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    const __m512i unsigned_x =
        _mm512_set1_epi32(static_cast<int>(load_group(operands[r] + g * kGroupDepth)));
    // Lanes whose code is negative: the group's 4 codes broadcast like the
    // weights' 4-deep groups, so the mask lines up with them.
    const __mmask64 negative =
        kSigned ? _mm512_movepi8_mask(_mm512_set1_epi32(
                      static_cast<int>(load_group(codes[r] + g * kGroupDepth))))
                : 0;
    #pragma GCC unroll 4
    for (int nb = 0; nb < NB; ++nb) {
      const __m512i signed_w = kSigned ? _mm512_mask_sub_epi8(wv[nb], negative, zero, wv[nb]) : wv[nb];
      const __m512i pairs = _mm512_maddubs_epi16(unsigned_x, signed_w);
      sum[r][nb] = _mm512_add_epi32(sum[r][nb], _mm512_madd_epi16(pairs, ones));
    }
  }
}

// Every code of rows [m0, m0 + MR) >= lowest (code_floor_avx2.h; their
// zero padding past the depth is).
template <int MR>
bool rows_at_least(const GemmArgs& a, size_t m0, int8_t lowest) {
  for (int r = 0; r < MR; ++r) {
    if (!codes_at_least(a.xq + (m0 + r) * a.xq_stride, a.xq_stride, lowest)) return false;
  }
  return true;
}

// Split when the wide groups cost less than every group with the sign
// step. Per group and tile the split's narrow groups take 3·MR·NB
// operations, its wide ones 4·MR·NB + MR (the sign masks) + 2·NB (the
// correction); the sign step alone 4·MR·NB + MR on every group.
template <int MR, int NB>
constexpr bool split_pays(size_t narrow, size_t wide) {
  return 2 * NB * wide <= static_cast<size_t>(MR * (NB + 1)) * narrow;
}

// Every loop over rows and blocks is unrolled before GCC places the
// accumulator array (see int8_gemm_avx512_vnni.cc: left to itself GCC 12
// kept such arrays in memory).
template <int MR, int NB, TileCodes kCodes>
void tile_of(const GemmArgs& a, size_t m0, size_t b0) {
  const PackedWeights& w = *a.weights;
  const size_t block_stride = w.groups * kGroupBytes;
  const int8_t* block = w.blocks + b0 * block_stride;
  __m512i sum[MR][NB];
  __m512i pair_sums[NB];
  #pragma GCC unroll 4
  for (int nb = 0; nb < NB; ++nb) {
    pair_sums[nb] = _mm512_setzero_si512();
    #pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) sum[r][nb] = _mm512_setzero_si512();
  }
  TileChunk<MR> c;
  bool split = true;  // kFull: decided on the first chunk
  for (size_t g0 = 0; g0 < w.groups; g0 += kChunkGroupsAvx512) {
    const size_t groups = w.groups - g0 < kChunkGroupsAvx512 ? w.groups - g0 : kChunkGroupsAvx512;
    const int8_t* rows[MR];  // the chunk's codes
    #pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) rows[r] = a.xq + (m0 + r) * a.xq_stride + g0 * kGroupDepth;
    const int8_t* chunk = block + g0 * kGroupBytes;
    auto add = [&](auto is_signed, auto with_pair_sums, const int8_t* const(&operands)[MR],
                   size_t g) {
      // The first rows over these weights prefetch the next tile's.
      if (m0 == 0) prefetch_next_tile_group<NB>(chunk + g * kGroupBytes, block_stride);
      add_group<MR, NB, decltype(is_signed)::value, decltype(with_pair_sums)::value>(
          chunk + g * kGroupBytes, block_stride, operands, rows, g, sum, pair_sums);
    };
    using Yes = std::true_type;
    using No = std::false_type;
    if constexpr (kCodes == TileCodes::kOffsetTwo) {
      #pragma GCC unroll 4
      for (int r = 0; r < MR; ++r) {
        map_codes_avx512(rows[r], groups * kGroupDepth, c.narrow_codes[r], [](__m512i v) {
          return _mm512_add_epi8(v, _mm512_set1_epi8(kReluOffset));
        });
      }
      for (size_t g = 0; g < groups; ++g) add(No{}, No{}, c.narrow_operands, g);
    } else if constexpr (kCodes == TileCodes::kNonnegative) {
      prepare_nonzero<MR>(rows, groups, c);
      for (size_t i = 0; i < c.narrow_count; ++i) add(No{}, No{}, rows, c.narrow_groups[i]);
    } else {
      prepare_split<MR>(rows, groups, c);
      if (g0 == 0) split = split_pays<MR, NB>(c.narrow_count, c.wide_count);
      if (!split) {
        for (size_t g = 0; g < groups; ++g) add(Yes{}, No{}, c.magnitude_operands, g);
        continue;
      }
      for (size_t i = 0; i < c.narrow_count; ++i) {
        add(No{}, No{}, c.narrow_operands, c.narrow_groups[i]);
      }
      // The wide groups with the sign step, and 64·Σ w of their weights, so
      // that every sum holds 64·Σ_k w, as the narrow codes' do: pair sums
      // of weights are at most 2·127 in magnitude, 128 groups' fit 16 bits.
      constexpr size_t kGroupsPer16Bits = 128;
      for (size_t first = 0; first < c.wide_count; first += kGroupsPer16Bits) {
        const size_t end =
            c.wide_count - first < kGroupsPer16Bits ? c.wide_count : first + kGroupsPer16Bits;
        for (size_t i = first; i < end; ++i) {
          add(Yes{}, Yes{}, c.magnitude_operands, c.wide_groups[i]);
        }
        #pragma GCC unroll 4
        for (int nb = 0; nb < NB; ++nb) {
          const __m512i correction =
              _mm512_madd_epi16(pair_sums[nb], _mm512_set1_epi16(static_cast<int16_t>(kNarrowCodes)));
          pair_sums[nb] = _mm512_setzero_si512();
          #pragma GCC unroll 4
          for (int r = 0; r < MR; ++r) sum[r][nb] = _mm512_add_epi32(sum[r][nb], correction);
        }
      }
    }
  }
  // What the sums hold on top of Σ xq·w: offset·Σ_k w.
  const int32_t offset = kCodes == TileCodes::kOffsetTwo ? kReluOffset
                         : kCodes == TileCodes::kFull && split ? kNarrowCodes
                                                               : 0;
  store_dequantized_avx512<MR, NB>(a, m0, b0, sum, offset);
}

template <int MR, int NB>
void tile(const GemmArgs& a, size_t m0, size_t b0) {
  if (rows_at_least<MR>(a, m0, 0)) {
    tile_of<MR, NB, TileCodes::kNonnegative>(a, m0, b0);
  } else if (rows_at_least<MR>(a, m0, -kReluOffset)) {
    tile_of<MR, NB, TileCodes::kOffsetTwo>(a, m0, b0);
  } else {
    tile_of<MR, NB, TileCodes::kFull>(a, m0, b0);
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
