// The AVX2 int8 GEMM's full codes (xq in [-127, 127], what int8 models
// use; int8_gemm_avx2.cc's opening has the code steps), row pair by row
// pair, per group of 4 depth:
//   - the split: in the groups where every code of both rows is within
//     ±64 (narrow groups) the narrow codes' step xq + 64 (3 instructions
//     per 32 multiply-adds), the sign step (5; 4 with vpsignb) only in the
//     others (wide groups), which also add 64·Σ w of their weights, so that
//     every sum holds 64·Σ_k w for the epilogue to take out. Layer-normalized
//     rows are mostly small codes: in a Marian student's encoder (tiny11,
//     alphas) 16-24% of a row pair's groups are wide
//     (edgemt_kernels_benchmark BM_Int8GemmNormalizedCodes, Zen 4 running
//     the AVX2 kernel: 145 -> 160-165 GFLOP/s). A pair whose groups are
//     mostly wide runs them all with the sign step.
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
#include "kernels/x86/code_floor_avx2.h"
#include "kernels/x86/int8_epilogue_avx2.h"
#include "kernels/x86/int8_tiles_avx2.h"
#include "kernels/x86/nonzero_list.h"

namespace edgemt::kernels::int8 {
namespace {

// How accumulate_chunk runs a chunk of full codes.
enum class ChunkWork {
  kSplit,    // narrow groups as xq + 64, wide ones with the sign step
  kAllWide,  // every group with the sign step (codes mostly beyond ±64)
  kNonzero,  // codes >= 0 (a ReLU's) as they are, the groups not all zero
};

// A chunk of depth of MR rows of full codes, prepared for the split
// products (accumulate_chunk): the narrow operands xq + 64, the magnitudes
// |xq|, the sign masks 0xFF where xq < 0 (kMasks: the xor/sub step), and
// the chunk's groups listed in order as narrow (every row's codes within
// ±64) or wide.
template <bool kMasks, int MR>
struct SplitChunk {
  alignas(32) uint8_t narrow_codes[MR][kChunkBytes];
  alignas(32) uint8_t magnitudes[MR][kChunkBytes];
  alignas(32) int8_t sign_masks[MR][kMasks ? kChunkBytes : 1];
  const int8_t* rows[MR];  // the codes themselves (vpsignb's signs)
  // Group indices (x86::append_nonzero_lanes8 writes 8 at a time: slack).
  uint32_t narrow_groups[kChunkGroups + 8];
  uint32_t wide_groups[kChunkGroups + 8];
  size_t narrow_count;
  size_t wide_count;
  size_t groups;  // in the chunk
  ChunkWork work;
};

// Prepares `groups` groups of rows[r] (codes from a chunk's start), 8
// groups (32 codes) at a time.
template <bool kMasks, int MR>
inline void prepare_split(const int8_t* const (&rows)[MR], size_t groups,
                          SplitChunk<kMasks, MR>& chunk) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i narrow = _mm256_set1_epi8(static_cast<char>(kNarrowCodes));
  size_t narrow_listed = 0, wide_listed = 0;
  for (int r = 0; r < MR; ++r) chunk.rows[r] = rows[r];
  for (size_t g = 0; g < groups; g += 8) {
    const size_t count = groups - g < 8 ? groups - g : 8;
    const size_t i = g * kGroupDepth;
    __m256i beyond = zero;  // 0xFF where a row's |xq| > 64
    for (int r = 0; r < MR; ++r) {
      const __m256i v = load_groups8(rows[r] + i, count);
      const __m256i magnitude = _mm256_abs_epi8(v);
      _mm256_store_si256(reinterpret_cast<__m256i*>(chunk.narrow_codes[r] + i),
                         _mm256_add_epi8(v, narrow));
      _mm256_store_si256(reinterpret_cast<__m256i*>(chunk.magnitudes[r] + i), magnitude);
      if constexpr (kMasks) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(chunk.sign_masks[r] + i),
                           _mm256_cmpgt_epi8(zero, v));
      }
      beyond = _mm256_or_si256(beyond, _mm256_cmpgt_epi8(magnitude, narrow));
    }
    // Bit j: group g + j holds a code beyond ±64 in some row.
    const unsigned groups_here = (1u << count) - 1u;
    const unsigned wide_bits = ~static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(
                                   _mm256_cmpeq_epi32(beyond, zero)))) & groups_here;
    narrow_listed = x86::append_nonzero_lanes8(~wide_bits & groups_here, g, chunk.narrow_groups,
                                               narrow_listed);
    wide_listed = x86::append_nonzero_lanes8(wide_bits, g, chunk.wide_groups, wide_listed);
  }
  chunk.narrow_count = narrow_listed;
  chunk.wide_count = wide_listed;
  chunk.groups = groups;
}

// Lists the groups of rows[r] (codes from a chunk's start, all >= 0) that
// are not all zero in every row, 8 at a time, as the chunk's narrow groups:
// a ReLU's output is mostly zeros (in a Marian student's encoder 85% of the
// second feed-forward product's codes, and half of a pair of rows'
// groups), whose products add nothing to the exact sums.
template <bool kMasks, int MR>
inline void prepare_nonzero(const int8_t* const (&rows)[MR], size_t groups,
                            SplitChunk<kMasks, MR>& chunk) {
  const __m256i zero = _mm256_setzero_si256();
  size_t listed = 0;
  for (int r = 0; r < MR; ++r) chunk.rows[r] = rows[r];
  for (size_t g = 0; g < groups; g += 8) {
    const size_t count = groups - g < 8 ? groups - g : 8;
    const size_t i = g * kGroupDepth;
    __m256i any = zero;
    for (int r = 0; r < MR; ++r) {
      any = _mm256_or_si256(any, load_groups8(rows[r] + i, count));
    }
    const unsigned groups_here = (1u << count) - 1u;
    const unsigned zero_groups = static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(any, zero))));
    listed = x86::append_nonzero_lanes8(~zero_groups & groups_here, g, chunk.narrow_groups, listed);
  }
  chunk.narrow_count = listed;
  chunk.wide_count = 0;
  chunk.groups = groups;
  chunk.work = ChunkWork::kNonzero;
}

// Adds 64·Σ w over the listed groups of a chunk to each row's sums, per
// column (vpmaddubsw of ones: each pair of weights summed in 16 bits,
// 2·127 at most, so 128 groups at a time; then vpmaddwd by 64 adds the two
// pairs of a column's group into its int32 lane).
template <int MR, int NB>
inline void add_wide_correction(const int8_t* chunk, size_t block_stride,
                                const uint32_t* wide_groups, size_t wide_count,
                                __m256i (&sum)[MR][NB][2]) {
  constexpr size_t kGroupsPer16Bits = 128;
  const __m256i ones = _mm256_set1_epi8(1);
  const __m256i narrow_offset = _mm256_set1_epi16(static_cast<int16_t>(kNarrowCodes));
  for (size_t first = 0; first < wide_count; first += kGroupsPer16Bits) {
    const size_t end = wide_count - first < kGroupsPer16Bits ? wide_count : first + kGroupsPer16Bits;
    __m256i pair_sums[NB][2];
    for (int nb = 0; nb < NB; ++nb) pair_sums[nb][0] = pair_sums[nb][1] = _mm256_setzero_si256();
    for (size_t i = first; i < end; ++i) {
      const int8_t* group = chunk + wide_groups[i] * kGroupBytes;
      for (int nb = 0; nb < NB; ++nb) {
        for (int h = 0; h < 2; ++h) {
          const __m256i wv = _mm256_load_si256(
              reinterpret_cast<const __m256i*>(group + nb * block_stride + 32 * h));
          pair_sums[nb][h] = _mm256_add_epi16(pair_sums[nb][h], _mm256_maddubs_epi16(ones, wv));
        }
      }
    }
    for (int nb = 0; nb < NB; ++nb) {
      for (int h = 0; h < 2; ++h) {
        const __m256i correction = _mm256_madd_epi16(pair_sums[nb][h], narrow_offset);
        for (int r = 0; r < MR; ++r) sum[r][nb][h] = _mm256_add_epi32(sum[r][nb][h], correction);
      }
    }
  }
}

// Adds one prepared chunk's products of MR rows × NB blocks (weights from
// `chunk_weights`, the chunk's first group in the first block) to
// sums[r][nb][half] (the first chunk's to zero: the stripe's sums are
// not cleared first), by the chunk's work:
//   - kSplit: the narrow groups as narrow codes (xq + 64, 3 instructions
//     per 32 multiply-adds), the wide ones with the sign step (5; 4 with
//     vpsignb) and 64·Σ w of the wide groups' weights, so that the sums
//     hold 64·Σ_k w over every group, as narrow codes' do;
//   - kAllWide: every group with the sign step: the exact sums;
//   - kNonzero: the listed groups' codes as they are (3 instructions): the
//     exact sums.
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
  const __m256i no_sign[MR] = {};
  auto add_wide = [&](size_t g) {
    __m256i sign[MR], unsigned_x[MR];
    for (int r = 0; r < MR; ++r) {
      unsigned_x[r] = _mm256_set1_epi32(static_cast<int>(
          load_group(reinterpret_cast<const int8_t*>(c.magnitudes[r]) + g * kGroupDepth)));
      sign[r] = _mm256_set1_epi32(static_cast<int>(
          load_group(kMasks ? c.sign_masks[r] + g * kGroupDepth : c.rows[r] + g * kGroupDepth)));
    }
    add_products<kSign, MR, NB>(chunk_weights + g * kGroupBytes, block_stride, unsigned_x, sign,
                                ones, sum);
  };
  // The listed groups with unsigned operands from codes[r] (offset codes).
  auto add_listed = [&](const int8_t* const (&codes)[MR]) {
    for (size_t i = 0; i < c.narrow_count; ++i) {
      const size_t g = c.narrow_groups[i];
      __m256i unsigned_x[MR];
      for (int r = 0; r < MR; ++r) {
        unsigned_x[r] = _mm256_set1_epi32(static_cast<int>(load_group(codes[r] + g * kGroupDepth)));
      }
      add_products<CodeStep::kOffset, MR, NB>(chunk_weights + g * kGroupBytes, block_stride,
                                              unsigned_x, no_sign, ones, sum);
    }
  };
  if (c.work == ChunkWork::kAllWide) {
    for (size_t g = 0; g < c.groups; ++g) add_wide(g);
  } else if (c.work == ChunkWork::kNonzero) {
    add_listed(c.rows);
  } else {
    const int8_t* narrow_codes[MR];
    for (int r = 0; r < MR; ++r) narrow_codes[r] = reinterpret_cast<const int8_t*>(c.narrow_codes[r]);
    add_listed(narrow_codes);
    for (size_t i = 0; i < c.wide_count; ++i) add_wide(c.wide_groups[i]);
    add_wide_correction<MR, NB>(chunk_weights, block_stride, c.wide_groups, c.wide_count, sum);
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
  // Split when wide groups are fewer than 1 in kSplitBelow. Cycles per
  // group and tile on Zen's two multiply pipes: 8 narrow, 10 wide, and the
  // correction 2 more for 2 blocks (2 rows), 4 for 4 (1 row).
  static constexpr size_t kSplitBelow = MR == 2 ? 2 : 3;

  size_t m0 = 0;
  bool nonnegative = false;
  bool relu_offset = false;
  // Decided on the first chunk: rows whose codes are mostly beyond ±64
  // run every group with the sign step, without the correction.
  ChunkWork work = ChunkWork::kSplit;
  SplitChunk<kMasks, MR> chunk;
  alignas(32) int32_t sums[kMaxStripeBlocks * MR * 16];

  void start(const GemmArgs& a, size_t rows_from) {
    m0 = rows_from;
    nonnegative = rows_at_least<MR>(a, m0, 0);
    relu_offset = !nonnegative && rows_at_least<MR>(a, m0, -kReluOffset);
  }
  void prepare(const GemmArgs& a, size_t g0, size_t groups) {
    if (relu_offset) return;
    const int8_t* rows[MR];
    for (int r = 0; r < MR; ++r) rows[r] = a.xq + (m0 + r) * a.xq_stride + g0 * kGroupDepth;
    if (nonnegative) {
      prepare_nonzero<kMasks, MR>(rows, groups, chunk);
      work = ChunkWork::kNonzero;
      return;
    }
    prepare_split<kMasks, MR>(rows, groups, chunk);
    if (g0 == 0) {
      work = chunk.wide_count * kSplitBelow <= groups ? ChunkWork::kSplit : ChunkWork::kAllWide;
    }
    chunk.work = work;
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
    // What the sums hold on top of Σ xq·w: offset·Σ_k w.
    const int32_t offset = work == ChunkWork::kSplit ? kNarrowCodes : 0;
    for_each_tile<MR>(stripe, end, [&](size_t b, auto blocks) {
      constexpr int NB = decltype(blocks)::value;
      store_dequantized_avx2<MR, NB>(a, m0, b, tile_sums<MR, NB>(sums, b - stripe), offset);
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
