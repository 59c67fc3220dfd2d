// Lists of a row's nonzero inputs, for the zero-skipping kernels
// (f32_gemm_sparse.h, int8_gemm_sparse.h): a compare's mask over 16 (8)
// lanes becomes their positions, appended in order, with no branch per
// lane. A loop over the mask's bits mispredicted its exit about once per
// compare, which at 5-20% nonzero cost more than the terms themselves; the
// kernels list a slice of the row first, then run its terms as one loop.
// Each append writes a whole vector: `list` needs 16 (8) slots of slack.
// for_each_listed runs the whole pattern.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace edgemt::kernels::x86 {

// Inputs listed at a time: 2 KiB of stack per list.
constexpr size_t kListSlice = 512;

// Appends first + i for each set bit i of `nonzero` to list[count...];
// returns the new count. A compress into a register, stored whole: a
// compress straight to memory is slow on AMD Zen 4. AVX-512 only: declared
// everywhere for for_each_listed<16>, defined where AVX-512 is on.
inline size_t append_nonzero_lanes16(__mmask16 nonzero, size_t first, uint32_t* list, size_t count);
#if defined(__AVX512F__)
inline size_t append_nonzero_lanes16(__mmask16 nonzero, size_t first, uint32_t* list, size_t count) {
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i positions = _mm512_add_epi32(lanes, _mm512_set1_epi32(static_cast<int>(first)));
  _mm512_storeu_si512(list + count, _mm512_maskz_compress_epi32(nonzero, positions));
  return count + static_cast<size_t>(__builtin_popcount(nonzero));
}

// Bit j: group g0 + j of a row of int8 codes (kGroupDepth = 4 bytes each)
// is not all zero, for g0 + j < end (at most 16 groups): the `nonzero` of
// the int8 zero-skipping kernels' for_each_listed<16>. `static`: each
// AVX-512 kernel file keeps its own copy, compiled for its own target.
static inline __mmask16 nonzero_code_groups16(const int8_t* row, size_t g0, size_t end) {
  const size_t groups = end - g0;
  const __mmask16 valid =
      groups >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << groups) - 1u);
  const __m512i v = _mm512_maskz_loadu_epi32(valid, row + g0 * 4);
  return _mm512_mask_test_epi32_mask(valid, v, v);
}
#endif

// For each 8-bit mask, the positions of its set bits in order, one byte
// each (AVX2 has no compress): bits 0 and 3 -> bytes {0, 3, 0, ...}.
struct LanePositions {
  uint64_t of[256];
};
constexpr LanePositions make_lane_positions() {
  LanePositions table{};
  for (unsigned mask = 0; mask < 256; ++mask) {
    uint64_t bytes = 0;
    unsigned count = 0;
    for (unsigned bit = 0; bit < 8; ++bit) {
      if ((mask >> bit) & 1u) bytes |= static_cast<uint64_t>(bit) << (8 * count++);
    }
    table.of[mask] = bytes;
  }
  return table;
}
inline constexpr LanePositions kLanePositions = make_lane_positions();

// The same for 8 lanes (`nonzero` < 256), with AVX2.
inline size_t append_nonzero_lanes8(unsigned nonzero, size_t first, uint32_t* list, size_t count) {
  const __m256i positions = _mm256_cvtepu8_epi32(
      _mm_cvtsi64_si128(static_cast<long long>(kLanePositions.of[nonzero])));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(list + count),
                      _mm256_add_epi32(positions, _mm256_set1_epi32(static_cast<int>(first))));
  return count + static_cast<size_t>(__builtin_popcount(nonzero));
}

// Positions [0, depth) a slice at a time: `nonzero(p0, end)` gives the mask
// of the kLanes positions from p0 that hold a term (none at or past end),
// then `term(p)` runs for each, in order. kLanes 16 needs AVX-512.
template <size_t kLanes, typename Nonzero, typename Term>
inline void for_each_listed(size_t depth, Nonzero nonzero, Term term) {
  static_assert(kLanes == 8 || kLanes == 16, "8 lanes (AVX2) or 16 (AVX-512)");
  alignas(64) uint32_t list[kListSlice + kLanes];
  for (size_t slice = 0; slice < depth; slice += kListSlice) {
    const size_t end = depth - slice < kListSlice ? depth : slice + kListSlice;
    size_t count = 0;
    for (size_t p0 = slice; p0 < end; p0 += kLanes) {
      if constexpr (kLanes == 16) {
        count = append_nonzero_lanes16(nonzero(p0, end), p0, list, count);
      } else {
        count = append_nonzero_lanes8(nonzero(p0, end), p0, list, count);
      }
    }
    for (size_t i = 0; i < count; ++i) term(static_cast<size_t>(list[i]));
  }
}

}  // namespace edgemt::kernels::x86
