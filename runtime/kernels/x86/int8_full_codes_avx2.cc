// The AVX2 int8 GEMM's full codes (xq in [-127, 127], what int8 models
// use; int8_gemm_avx2.cc's opening has the code steps), row pair by row
// pair, per group of 4 depth:
//   - the split: the weights go in as the unsigned operand w + 128 (1 to
//     255) and the codes as they are, so a 16-bit lane vpmaddubsw makes
//     from codes xq_0, xq_1 lies within [-255·N, 255·P], P the sum of the
//     positive codes and N that of the negative ones' magnitudes. Groups
//     whose lanes have P and N at most 128 in both rows (narrow groups)
//     are exact that way (|lane| <= 32640), and two such groups g, g + 1
//     whose P and N still are when added up are summed in 16 bits and
//     widened by one vpmaddwd (3 multiplies per 64 multiply-adds instead
//     of 4: Zen's two multiply pipes are the limit). P and N apart, not
//     |xq_0| + |xq_1|: codes of both signs pair up too (base-shaped
//     random weights: 69% of the groups in pairs, against 40%).
//     The others (wide groups) take the sign step (5 instructions; 4 with
//     vpsignb). The sums then hold 128·Σ xq over the narrow groups, a
//     number per row taken out before the float part. Layer-normalized
//     rows are mostly small codes: in a Marian student's encoder (tiny11
//     trained on Multi30k) 95-99% of a row pair's groups are narrow and
//     most of them pair up (tiny11 int8 batch 32 with the AVX2 kernels,
//     Zen 5: 1.77x -> 2.12x Marian's sentences per second, against the
//     narrow codes' step xq + 64 of before).
//   - Codes all >= 0 in the pair (a ReLU's output: the second feed-forward
//     product's input, 28-32% of a Marian student's multiply-adds at batch
//     32, 85% of its codes zero): the codes as they are (a pair at most
//     2·127·127), skipping the groups zero in both rows. All >= -2: xq + 2
//     in [0, 129] (a pair at most 2·129·127 = 32766), every group.
// The sums are exact either way: the same bits as every other kernel.
// A pair's rows are prepared (operands, masks, the lists of groups) a chunk
// of depth at a time, once for a stripe of up to 32 blocks (512 columns):
// prepared for each 2-block tile, they took a third of the products' time.
#include <immintrin.h>

#include <type_traits>

#include "kernels/int8_gemm_variants.h"
#include "kernels/stream_prefetch.h"
#include "kernels/x86/code_floor_avx2.h"
#include "kernels/x86/int8_epilogue_avx2.h"
#include "kernels/x86/int8_tiles_avx2.h"
#include "kernels/x86/nonzero_list.h"

namespace edgemt::kernels::int8 {
namespace {

// The largest sum of the positive codes, and of the negative codes'
// magnitudes, of a narrow group's 16-bit lane (prepare_split).
constexpr int16_t kNarrowLaneLimit = 128;

// What a narrow product's unsigned weights add to each weight: w + 128.
constexpr int32_t kWeightOffset = 128;

// How accumulate_chunk runs a chunk of full codes.
enum class ChunkWork {
  kSplit,    // narrow groups (pairs of them too) as w + 128, wide ones with the sign step
  kNonzero,  // codes >= 0 (a ReLU's) as they are, the groups not all zero
};

// A chunk of depth of MR rows of full codes, prepared for the split
// products (accumulate_chunk): the magnitudes |xq| and sign masks 0xFF
// where xq < 0 (kMasks: the xor/sub step) of the wide groups, and the
// chunk's groups listed in order: narrow pairs (groups g, g + 1, g even,
// whose 16-bit sums fit together), other narrow groups, wide groups.
template <bool kMasks, int MR>
struct SplitChunk {
  alignas(32) uint8_t magnitudes[MR][kChunkBytes];
  alignas(32) int8_t sign_masks[MR][kMasks ? kChunkBytes : 1];
  const int8_t* rows[MR];  // the codes themselves (narrow operands, vpsignb's signs)
  // Group indices (x86::append_nonzero_lanes8 writes 8 at a time: slack).
  // Pairs of groups summed in 16 bits: kSplit's g, g + 1 (g even), kNonzero's
  // consecutive listed groups.
  uint32_t pair_groups[kChunkGroups / 2 + 8];
  uint32_t pair_partners[kChunkGroups / 2 + 8];
  int32_t peaks[kChunkGroups + 8];  // kNonzero: a group's largest xq_0 + xq_1
  uint32_t narrow_groups[kChunkGroups + 8];
  uint32_t wide_groups[kChunkGroups + 8];
  size_t pair_count;
  size_t narrow_count;
  size_t wide_count;
  int32_t narrow_code_sums[MR];  // Σ xq over each row's narrow groups (pairs too)
  ChunkWork work;
  bool fetch_next_tile;  // the stripe's first rows: prefetch_next_tile_group
};

// Prepares `groups` groups of rows[r] (codes from a chunk's start), 8
// groups (32 codes) at a time. A group is narrow when in each 16-bit lane
// vpmaddubsw makes from it (codes xq_0, xq_1 or xq_2, xq_3) the positive
// codes add up to at most 128 and so do the negative ones' magnitudes, in
// every row: with the weights as unsigned w + 128 in [1, 255] the lane is
// then within ±255·128 = ±32640. Two groups whose lanes still are when
// added up can be summed in 16 bits before vpmaddwd widens them (a wrapped
// partial sum is no harm: the total fits).
template <bool kMasks, int MR>
inline void prepare_split(const int8_t* const (&rows)[MR], size_t groups,
                          SplitChunk<kMasks, MR>& chunk) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  const __m256i lane_limit = _mm256_set1_epi16(kNarrowLaneLimit);
  size_t pairs_listed = 0, narrow_listed = 0, wide_listed = 0;
  __m256i code_sums[MR];  // int32 per group lane
  for (int r = 0; r < MR; ++r) {
    chunk.rows[r] = rows[r];
    code_sums[r] = zero;
  }
  for (size_t g = 0; g < groups; g += 8) {
    const size_t count = groups - g < 8 ? groups - g : 8;
    const size_t i = g * kGroupDepth;
    __m256i lane_over = zero;  // 16-bit lanes past the limit in some row
    __m256i pair_over = zero;  // the same for groups 2j and 2j + 1 summed (dword 2j)
    __m256i group_sums[MR];
    for (int r = 0; r < MR; ++r) {
      const __m256i v = load_groups8(rows[r] + i, count);
      const __m256i magnitude = _mm256_abs_epi8(v);
      _mm256_store_si256(reinterpret_cast<__m256i*>(chunk.magnitudes[r] + i), magnitude);
      if constexpr (kMasks) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(chunk.sign_masks[r] + i),
                           _mm256_cmpgt_epi8(zero, v));
      }
      const __m256i positive = _mm256_max_epi8(v, zero);
      const __m256i negative = _mm256_sub_epi8(positive, v);  // max(-xq, 0)
      const __m256i p = _mm256_maddubs_epi16(positive, ones8);  // P per lane, <= 254
      const __m256i n = _mm256_maddubs_epi16(negative, ones8);  // N per lane
      lane_over = _mm256_or_si256(lane_over, _mm256_cmpgt_epi16(_mm256_max_epi16(p, n), lane_limit));
      const __m256i two_p = _mm256_add_epi16(p, _mm256_srli_epi64(p, 32));
      const __m256i two_n = _mm256_add_epi16(n, _mm256_srli_epi64(n, 32));
      pair_over = _mm256_or_si256(
          pair_over, _mm256_cmpgt_epi16(_mm256_max_epi16(two_p, two_n), lane_limit));
      group_sums[r] = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, v), ones16);
    }
    const __m256i narrow_lanes = _mm256_cmpeq_epi32(lane_over, zero);
    for (int r = 0; r < MR; ++r) {
      code_sums[r] = _mm256_add_epi32(code_sums[r], _mm256_and_si256(narrow_lanes, group_sums[r]));
    }
    // Bit j: group g + j (zero codes past the chunk are narrow, never listed).
    const unsigned groups_here = (1u << count) - 1u;
    const unsigned narrow_bits =
        static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(narrow_lanes))) & groups_here;
    const unsigned pair_bits = static_cast<unsigned>(_mm256_movemask_ps(
                                   _mm256_castsi256_ps(_mm256_cmpeq_epi32(pair_over, zero)))) &
                               0x55u & (groups_here >> 1);
    x86::append_nonzero_lanes8(pair_bits, g + 1, chunk.pair_partners, pairs_listed);
    pairs_listed = x86::append_nonzero_lanes8(pair_bits, g, chunk.pair_groups, pairs_listed);
    narrow_listed = x86::append_nonzero_lanes8(narrow_bits & ~(pair_bits | pair_bits << 1), g,
                                               chunk.narrow_groups, narrow_listed);
    wide_listed = x86::append_nonzero_lanes8(~narrow_bits & groups_here, g, chunk.wide_groups,
                                             wide_listed);
  }
  for (int r = 0; r < MR; ++r) {
    alignas(32) int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), code_sums[r]);
    int32_t total = 0;
    for (int32_t lane : lanes) total += lane;
    chunk.narrow_code_sums[r] = total;
  }
  chunk.pair_count = pairs_listed;
  chunk.narrow_count = narrow_listed;
  chunk.wide_count = wide_listed;
  chunk.work = ChunkWork::kSplit;
}

// The largest sum of a listed ReLU pair's two groups' xq_0 + xq_1: its
// 16-bit lanes are then at most 127·258 = 32766.
constexpr int32_t kReluPairLimit = 258;

// Lists the groups of rows[r] (codes from a chunk's start, all >= 0) that
// are not all zero in every row, 8 at a time: a ReLU's output is mostly
// zeros (in a Marian student's encoder 85% of the second feed-forward
// product's codes, and half of a pair of rows' groups), whose products add
// nothing to the exact sums. Consecutive listed groups whose codes are small
// enough (kReluPairLimit; nearly all of them in that encoder) become pairs
// summed in 16 bits, the others the narrow list.
template <bool kMasks, int MR>
inline void prepare_nonzero(const int8_t* const (&rows)[MR], size_t groups,
                            SplitChunk<kMasks, MR>& chunk) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i low16 = _mm256_set1_epi32(0xFFFF);
  uint32_t listed_groups[kChunkGroups + 8];
  size_t listed = 0;
  for (int r = 0; r < MR; ++r) chunk.rows[r] = rows[r];
  for (size_t g = 0; g < groups; g += 8) {
    const size_t count = groups - g < 8 ? groups - g : 8;
    const size_t i = g * kGroupDepth;
    __m256i any = zero;
    __m256i peak = zero;  // 16-bit lanes xq_0 + xq_1, the largest of the rows
    for (int r = 0; r < MR; ++r) {
      const __m256i v = load_groups8(rows[r] + i, count);
      any = _mm256_or_si256(any, v);
      peak = _mm256_max_epi16(peak, _mm256_maddubs_epi16(v, ones8));
    }
    peak = _mm256_and_si256(_mm256_max_epi16(peak, _mm256_srli_epi32(peak, 16)), low16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(chunk.peaks + g), peak);
    const unsigned groups_here = (1u << count) - 1u;
    const unsigned zero_groups = static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(any, zero))));
    listed = x86::append_nonzero_lanes8(~zero_groups & groups_here, g, listed_groups, listed);
  }
  // Branch-free: each listed pair is written to both lists, kept in one.
  size_t pairs = 0, singles = 0, j = 0;
  for (; j + 1 < listed; j += 2) {
    const uint32_t first = listed_groups[j], second = listed_groups[j + 1];
    const bool fits = chunk.peaks[first] + chunk.peaks[second] <= kReluPairLimit;
    chunk.pair_groups[pairs] = first;
    chunk.pair_partners[pairs] = second;
    pairs += fits ? 1 : 0;
    chunk.narrow_groups[singles] = first;
    chunk.narrow_groups[singles + 1] = second;
    singles += fits ? 0 : 2;
  }
  if (j < listed) chunk.narrow_groups[singles++] = listed_groups[j];
  chunk.pair_count = pairs;
  chunk.narrow_count = singles;
  chunk.wide_count = 0;
  chunk.work = ChunkWork::kNonzero;
}

// Adds one prepared chunk's products of MR rows × NB blocks (weights from
// `chunk_weights`, the chunk's first group in the first block) to
// sums[r][nb][half] (the first chunk's to zero: the stripe's sums are
// not cleared first), by the chunk's work:
//   - kSplit: the narrow groups with the weights as unsigned w + 128 (xor
//     0x80) and the codes as they are, a pair's two groups summed in 16
//     bits and widened once (vpmaddwd: 3 multiplies per 64 multiply-adds
//     instead of 4), so that the sums hold 128·Σ xq over the narrow
//     groups on top (StripeRows::store takes it out); the wide ones with
//     the sign step (5 instructions per 32 multiply-adds; 4 with vpsignb);
//   - kNonzero: the listed groups' codes as they are against w (3
//     instructions per 32 multiply-adds), pairs of them summed in 16 bits
//     as above: the exact sums.
// The stripe's first rows prefetch the next tile's line of each group they
// read (stream_prefetch.h): the lists visit a tile's lines out of order.
template <CodeStep kSign, int MR, int NB>
__attribute__((noinline)) void accumulate_chunk(
    const SplitChunk<kSign == CodeStep::kSignXorSub, MR>& c, const int8_t* chunk_weights,
    size_t block_stride, bool first_chunk, int32_t (&sums)[MR][NB][2][8]) {
  static_assert(MR <= 2 && MR * NB <= 4, "8 accumulators at most");
  constexpr bool kMasks = kSign == CodeStep::kSignXorSub;
  __m256i sum[MR][NB][2];
  for (int r = 0; r < MR; ++r) {
    for (int nb = 0; nb < NB; ++nb) {
      for (int h = 0; h < 2; ++h) {
        sum[r][nb][h] = first_chunk
                            ? _mm256_setzero_si256()
                            : _mm256_load_si256(reinterpret_cast<const __m256i*>(sums[r][nb][h]));
      }
    }
  }
  const __m256i ones = _mm256_set1_epi16(1);
  auto broadcast = [](const int8_t* codes, size_t g) {
    return _mm256_set1_epi32(static_cast<int>(load_group(codes + g * kGroupDepth)));
  };
  // Written out at each use: a lambda holding only the prefetch, GCC 12
  // took for one without effects and dropped its calls (objdump).
  auto add_wide = [&](size_t g) {
    if (c.fetch_next_tile) prefetch_next_tile_group<NB>(chunk_weights + g * kGroupBytes, block_stride);
    __m256i sign[MR], unsigned_x[MR];
    for (int r = 0; r < MR; ++r) {
      unsigned_x[r] = broadcast(reinterpret_cast<const int8_t*>(c.magnitudes[r]), g);
      sign[r] = broadcast(kMasks ? c.sign_masks[r] : c.rows[r], g);
    }
    add_products<kSign, MR, NB>(chunk_weights + g * kGroupBytes, block_stride, unsigned_x, sign,
                                ones, sum);
  };
  // The weights of group g, block nb, half h: as they are, or (kSplit's
  // narrow groups) as unsigned w + 128.
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  auto weights = [&](auto flipped, size_t g, int nb, int h) {
    const __m256i w = _mm256_load_si256(
        reinterpret_cast<const __m256i*>(chunk_weights + g * kGroupBytes + nb * block_stride + 32 * h));
    return decltype(flipped)::value ? _mm256_xor_si256(flip, w) : w;
  };
  // vpmaddubsw's unsigned operand: w + 128 (flipped), or a ReLU's codes.
  auto products = [](auto flipped, __m256i w, __m256i codes) {
    return decltype(flipped)::value ? _mm256_maddubs_epi16(w, codes) : _mm256_maddubs_epi16(codes, w);
  };
  // The listed pairs, each pair's 16-bit lanes summed before vpmaddwd, then
  // the listed single groups; the codes as they are.
  auto add_listed = [&](auto flipped) {
    for (size_t i = 0; i < c.pair_count; ++i) {
      const size_t g = c.pair_groups[i], partner = c.pair_partners[i];
      if (c.fetch_next_tile) {
        prefetch_next_tile_group<NB>(chunk_weights + g * kGroupBytes, block_stride);
        prefetch_next_tile_group<NB>(chunk_weights + partner * kGroupBytes, block_stride);
      }
      __m256i first[MR], second[MR];
      for (int r = 0; r < MR; ++r) {
        first[r] = broadcast(c.rows[r], g);
        second[r] = broadcast(c.rows[r], partner);
      }
      for (int nb = 0; nb < NB; ++nb) {
        for (int h = 0; h < 2; ++h) {
          const __m256i w0 = weights(flipped, g, nb, h);
          const __m256i w1 = weights(flipped, partner, nb, h);
          for (int r = 0; r < MR; ++r) {
            const __m256i pairs = _mm256_add_epi16(products(flipped, w0, first[r]),
                                                   products(flipped, w1, second[r]));
            sum[r][nb][h] = _mm256_add_epi32(sum[r][nb][h], _mm256_madd_epi16(pairs, ones));
          }
        }
      }
    }
    for (size_t i = 0; i < c.narrow_count; ++i) {
      const size_t g = c.narrow_groups[i];
      if (c.fetch_next_tile) prefetch_next_tile_group<NB>(chunk_weights + g * kGroupBytes, block_stride);
      __m256i codes[MR];
      for (int r = 0; r < MR; ++r) codes[r] = broadcast(c.rows[r], g);
      for (int nb = 0; nb < NB; ++nb) {
        for (int h = 0; h < 2; ++h) {
          const __m256i w = weights(flipped, g, nb, h);
          for (int r = 0; r < MR; ++r) {
            sum[r][nb][h] = _mm256_add_epi32(
                sum[r][nb][h], _mm256_madd_epi16(products(flipped, w, codes[r]), ones));
          }
        }
      }
    }
  };
  if (c.work == ChunkWork::kNonzero) {
    add_listed(std::false_type{});
  } else {
    add_listed(std::true_type{});
    for (size_t i = 0; i < c.wide_count; ++i) add_wide(c.wide_groups[i]);
  }
  store_sums<MR, NB>(sum, sums);
}

// Whether every code of rows [m0, m0 + MR) is >= lowest (a row's zero
// padding past its depth is). Most rows that are not a ReLU's output
// return at their first 32 codes.
template <int MR>
bool rows_at_least(const GemmArgs& a, size_t m0, int8_t lowest) {
  for (int r = 0; r < MR; ++r) {
    if (!codes_at_least(a.xq + (m0 + r) * a.xq_stride, a.xq_stride, lowest)) return false;
  }
  return true;
}

// Blocks one prepared chunk of a row group serves before the next group:
// as many as 256 KiB of weights hold (from L2), 4 to 32 (512 columns).
// Preparing a chunk for each 2-block tile took a third of the split
// products' time; BM_Int8GemmNormalizedCodes (M 4-320, K 256, Zen 4 running
// the AVX2 kernel): stripes of 4 blocks 137-139, 8 141-151, 32 159-162
// GFLOP/s.
constexpr size_t kMaxStripeBlocks = 32;
constexpr size_t kStripeWeightBytes = 256 * 1024;

inline size_t stripe_blocks(const PackedWeights& w) {
  const size_t blocks = kStripeWeightBytes / (w.groups * kGroupBytes);
  return blocks < 4 ? 4 : blocks > kMaxStripeBlocks ? kMaxStripeBlocks : blocks;
}

// Calls f(b, NB) for the tiles of MR rows over blocks [first, end), NB
// (an integral_constant) blocks each, as many as the registers hold.
template <int MR, typename F>
inline void for_each_tile(size_t first, size_t end, F&& f) {
  constexpr size_t kMaxBlocksPerTile = 4 / MR;
  for (size_t b = first; b < end; b += kMaxBlocksPerTile) {
    const size_t nb = end - b < kMaxBlocksPerTile ? end - b : kMaxBlocksPerTile;
    if (nb == 1) {
      f(b, std::integral_constant<int, 1>{});
    } else if (nb == 2) {
      f(b, std::integral_constant<int, 2>{});
    } else if constexpr (kMaxBlocksPerTile == 4) {
      if (nb == 3) {
        f(b, std::integral_constant<int, 3>{});
      } else {
        f(b, std::integral_constant<int, 4>{});
      }
    }
  }
}

// The sums of the tile from a stripe's block `block` (counted from the
// stripe's first), in a buffer of MR·16 int32 per block.
template <int MR, int NB>
int32_t (&tile_sums(int32_t* stripe_sums, size_t block))[MR][NB][2][8] {
  return *reinterpret_cast<int32_t(*)[MR][NB][2][8]>(stripe_sums + block * MR * 16);
}

// One tile of rows whose codes are all >= -2 (a ReLU's), as offset tiles.
template <int MR, int NB>
void relu_tile(const GemmArgs& a, size_t m0, size_t b) {
  alignas(32) int32_t sums[MR][NB][2][8];
  accumulate_offset<MR, NB>(a, m0, b, kReluOffset, sums);
  store_dequantized_avx2<MR, NB>(a, m0, b, sums, kReluOffset);
}

// MR rows from m0 of full codes over a stripe of at most kMaxStripeBlocks
// blocks, a chunk of depth at a time, prepared once for all the stripe's
// tiles (accumulate_chunk), their sums kept here between chunks: codes
// >= 0 (a ReLU's output) as they are, skipping the groups zero in every
// row; codes >= -2 whole, as offset tiles (relu_tile); others split into
// narrow and wide groups.
template <CodeStep kSign, int MR>
struct StripeRows {
  static constexpr bool kMasks = kSign == CodeStep::kSignXorSub;

  size_t m0 = 0;
  bool nonnegative = false;
  bool relu_offset = false;
  SplitChunk<kMasks, MR> chunk;
  alignas(32) int32_t sums[kMaxStripeBlocks * MR * 16];
  // kSplit: Σ xq over each row's narrow groups so far (the sums hold 128
  // times it on top of Σ xq·w).
  int32_t narrow_code_sums[MR] = {};

  void start(const GemmArgs& a, size_t rows_from) {
    m0 = rows_from;
    chunk.fetch_next_tile = m0 == 0;
    nonnegative = rows_at_least<MR>(a, m0, 0);
    relu_offset = !nonnegative && rows_at_least<MR>(a, m0, -kReluOffset);
  }
  void prepare(const GemmArgs& a, size_t g0, size_t groups) {
    if (relu_offset) return;
    const int8_t* rows[MR];
    for (int r = 0; r < MR; ++r) rows[r] = a.xq + (m0 + r) * a.xq_stride + g0 * kGroupDepth;
    if (nonnegative) {
      prepare_nonzero<kMasks, MR>(rows, groups, chunk);
      return;
    }
    prepare_split<kMasks, MR>(rows, groups, chunk);
    for (int r = 0; r < MR; ++r) narrow_code_sums[r] += chunk.narrow_code_sums[r];
  }
  // The tiles of blocks [first, end) of the stripe from block `stripe`:
  // offset tiles whole (first chunk only), the others this chunk's products.
  void add_chunk(const GemmArgs& a, size_t g0, size_t stripe, size_t first, size_t end) {
    const PackedWeights& w = *a.weights;
    const size_t block_stride = w.groups * kGroupBytes;
    for_each_tile<MR>(first, end, [&](size_t b, auto blocks) {
      constexpr int NB = decltype(blocks)::value;
      if (relu_offset) {
        if (g0 == 0) relu_tile<MR, NB>(a, m0, b);
      } else {
        accumulate_chunk<kSign, MR, NB>(chunk, w.blocks + b * block_stride + g0 * kGroupBytes,
                                        block_stride, g0 == 0, tile_sums<MR, NB>(sums, b - stripe));
      }
    });
  }
  void store(const GemmArgs& a, size_t stripe, size_t end) {
    if (relu_offset) return;
    // What the sums hold on top of Σ xq·w: 128·Σ xq over the narrow groups
    // (split rows; none in a ReLU's), taken out in the float part.
    int32_t row_offsets[MR];
    for (int r = 0; r < MR; ++r) row_offsets[r] = kWeightOffset * narrow_code_sums[r];
    for_each_tile<MR>(stripe, end, [&](size_t b, auto blocks) {
      constexpr int NB = decltype(blocks)::value;
      store_dequantized_avx2<MR, NB>(a, m0, b, tile_sums<MR, NB>(sums, b - stripe), 0, row_offsets);
    });
  }
};

// Rows [m0, m0 + MR0 + MR1) over blocks [first, end): two row groups (MR1
// 0: one) taking each tile in turn, so that the second reads the tile's
// weights from L1 after the first.
template <CodeStep kSign, int MR0, int MR1>
void full_code_rows(const GemmArgs& a, size_t m0, size_t first, size_t end) {
  StripeRows<kSign, MR0> rows0;
  StripeRows<kSign, MR1 == 0 ? 1 : MR1> rows1;
  rows0.start(a, m0);
  if constexpr (MR1 != 0) rows1.start(a, m0 + MR0);
  const PackedWeights& w = *a.weights;
  for (size_t g0 = 0; g0 < w.groups; g0 += kChunkGroups) {
    const size_t groups = w.groups - g0 < kChunkGroups ? w.groups - g0 : kChunkGroups;
    rows0.prepare(a, g0, groups);
    if constexpr (MR1 != 0) rows1.prepare(a, g0, groups);
    for (size_t b = first; b < end; b += 4 / MR0) {
      const size_t tile_end = end - b < 4 / MR0 ? end : b + 4 / MR0;
      rows0.add_chunk(a, g0, first, b, tile_end);
      if constexpr (MR1 != 0) rows1.add_chunk(a, g0, first, b, tile_end);
    }
  }
  rows0.store(a, first, end);
  if constexpr (MR1 != 0) rows1.store(a, first, end);
}

// Full codes: stripes of stripe_blocks() blocks outer, rows four at a
// time inner. No output prefetch: run_tiles' (the same rows' next stripe)
// is evicted before a 512-column stripe comes back to them, and the next
// rows' lines ahead made no difference (tiny11 int8 batch 32 1.98 s
// without any, 1.91-2.09 s with either).
template <CodeStep kSign>
void run_full_codes(const GemmArgs& a, size_t first_block, size_t block_count) {
  const size_t end_block = first_block + block_count;
  const size_t stripe = stripe_blocks(*a.weights);
  for (size_t b = first_block; b < end_block; b += stripe) {
    const size_t end = end_block - b < stripe ? end_block : b + stripe;
    for (size_t m = 0; m < a.rows; m += 4) {
      const size_t rows = a.rows - m < 4 ? a.rows - m : 4;
      switch (rows) {
        case 4: full_code_rows<kSign, 2, 2>(a, m, b, end); break;
        case 3: full_code_rows<kSign, 2, 1>(a, m, b, end); break;
        case 2: full_code_rows<kSign, 2, 0>(a, m, b, end); break;
        default: full_code_rows<kSign, 1, 0>(a, m, b, end); break;
      }
    }
  }
}

}  // namespace

void gemm_full_codes_avx2(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_full_codes<CodeStep::kSignXorSub>(a, first_block, block_count);
}

void gemm_full_codes_avx2_vpsignb(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_full_codes<CodeStep::kSignVpsignb>(a, first_block, block_count);
}

}  // namespace edgemt::kernels::int8
