// The zero-skipping f32 GEMM (f32_gemm_sparse.h) with AVX2 and FMA3, two
// ways (x86/listed_rows.h):
// - one row at a time over a group of up to 4 blocks (8 accumulators of 8
//   columns): the row's nonzero inputs are listed 8 at a time (a compare,
//   its sign bits and a table of their positions), once for all its groups,
//   and each adds its term to every accumulator;
// - shared tiles: 6 rows over 1 block (12 accumulators) over one list of
//   the inputs nonzero in any of the 6, where rows share most of their
//   nonzeros (3 rows x 2 blocks, the dense kernel's tile, was slower).
// Both add each term in k order from the bias: the dense kernel's fused
// multiply-adds without (most of) the ones whose x is zero.
#include <cstdint>

#include "kernels/f32_gemm_sparse.h"
#include "kernels/x86/avx2_math.h"
#include "kernels/x86/listed_rows.h"

namespace edgemt::kernels::f32 {
namespace {

constexpr size_t kGroupBlocks = 4;  // 64 columns

// Row m's listed terms on blocks [b0, b0 + kBlocks), from the bias (or the
// partial sums a previous slice left in y) into 8 accumulators, in k order.
template <size_t kBlocks>
void row_group(const GemmArgs& a, size_t m, size_t b0, const uint32_t* list, size_t count,
               x86::SliceEnds ends) {
  const PackedWeights& w = *a.weights;
  const size_t step = w.depth * kBlockColumns;  // floats between blocks
  const float* block = w.blocks + b0 * step;
  float* y = a.y + m * a.y_stride + b0 * kBlockColumns;
  // Columns of each block half that exist (y has no others): whole blocks
  // load and store plainly, the last one through a masked load and
  // avx2::store_first (vmaskmovps stores are slow on AMD).
  __m256 acc[kBlocks][2];
  for (size_t j = 0; j < kBlocks; ++j) {
    const size_t width = w.columns - (b0 + j) * kBlockColumns;
    for (size_t h = 0; h < 2; ++h) {
      const size_t n = j * kBlockColumns + 8 * h;
      if (ends.first) {
        acc[j][h] = _mm256_load_ps(w.bias + b0 * kBlockColumns + n);
      } else if (width >= kBlockColumns) {
        acc[j][h] = _mm256_loadu_ps(y + n);
      } else {
        acc[j][h] = _mm256_maskload_ps(y + n, avx2::tail_mask(width > 8 * h ? width - 8 * h : 0));
      }
    }
  }
  const float* x = a.x + m * a.x_stride;
  for (size_t i = 0; i < count; ++i) {
    const size_t k = list[i];
    const __m256 xk = _mm256_set1_ps(x[k]);
    const float* wk = block + k * kBlockColumns;
    for (size_t j = 0; j < kBlocks; ++j) {
      acc[j][0] = _mm256_fmadd_ps(xk, _mm256_load_ps(wk + j * step), acc[j][0]);
      acc[j][1] = _mm256_fmadd_ps(xk, _mm256_load_ps(wk + j * step + 8), acc[j][1]);
    }
  }
  // XNNPACK's clamp, as the dense kernel: max_ps(acc, low) is acc > low ? acc : low.
  const __m256 low = _mm256_set1_ps(a.relu ? 0.0f : -__builtin_huge_valf());
  for (size_t j = 0; j < kBlocks; ++j) {
    const size_t width = w.columns - (b0 + j) * kBlockColumns;
    for (size_t h = 0; h < 2; ++h) {
      const size_t n = j * kBlockColumns + 8 * h;
      const __m256 v = ends.last ? _mm256_max_ps(acc[j][h], low) : acc[j][h];
      if (width >= kBlockColumns) {
        _mm256_storeu_ps(y + n, v);
      } else if (width > 8 * h) {
        avx2::store_first(y + n, width - 8 * h, v);
      }
    }
  }
}

using RowGroup = void (*)(const GemmArgs&, size_t, size_t, const uint32_t*, size_t, x86::SliceEnds);
constexpr RowGroup kRowGroups[kGroupBlocks] = {row_group<1>, row_group<2>, row_group<3>,
                                               row_group<4>};

constexpr size_t kTileRows = 6;  // 6 rows x 1 block: 12 accumulators of 8 columns
// Listed weight rows fetched ahead, as the AVX-512 kernel's.
constexpr size_t kPrefetchAhead = 8;

// Rows [m0, m0 + kRows) on block b over one list of inputs, each nonzero in
// some row of the tile: each listed k adds x[m, k] · w[n, k] to every
// row's accumulators, in k order from the bias (a zero x adds fma(±0, w,
// acc), as the dense kernel does), then the clamp.
template <size_t kRows>
void shared_tile(const GemmArgs& a, size_t m0, size_t b, const uint32_t* list, size_t count) {
  const PackedWeights& w = *a.weights;
  const float* block = w.blocks + b * w.depth * kBlockColumns;
  const float* bias = w.bias + b * kBlockColumns;
  __m256 acc[kRows][2];
  for (size_t r = 0; r < kRows; ++r) {
    acc[r][0] = _mm256_load_ps(bias);
    acc[r][1] = _mm256_load_ps(bias + 8);
  }
  const float* x = a.x + m0 * a.x_stride;
  for (size_t i = 0; i < count; ++i) {
    const size_t k = list[i];
    if (i + kPrefetchAhead < count) {
      _mm_prefetch(reinterpret_cast<const char*>(block + list[i + kPrefetchAhead] * kBlockColumns),
                   _MM_HINT_T0);
    }
    const float* wk = block + k * kBlockColumns;
    const __m256 lo = _mm256_load_ps(wk), hi = _mm256_load_ps(wk + 8);
    for (size_t r = 0; r < kRows; ++r) {
      const __m256 xk = _mm256_set1_ps(x[r * a.x_stride + k]);
      acc[r][0] = _mm256_fmadd_ps(xk, lo, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(xk, hi, acc[r][1]);
    }
  }
  const __m256 low = _mm256_set1_ps(a.relu ? 0.0f : -__builtin_huge_valf());
  const size_t width = w.columns - b * kBlockColumns;
  for (size_t r = 0; r < kRows; ++r) {
    float* y = a.y + (m0 + r) * a.y_stride + b * kBlockColumns;
    const __m256 lo = _mm256_max_ps(acc[r][0], low), hi = _mm256_max_ps(acc[r][1], low);
    if (width >= kBlockColumns) {
      _mm256_storeu_ps(y, lo);
      _mm256_storeu_ps(y + 8, hi);
    } else {
      avx2::store_first(y, width, lo);
      if (width > 8) avx2::store_first(y + 8, width - 8, hi);
    }
  }
}

using SharedTile = void (*)(const GemmArgs&, size_t, size_t, const uint32_t*, size_t);
constexpr SharedTile kSharedTiles[kTileRows - 1] = {shared_tile<2>, shared_tile<3>, shared_tile<4>,
                                                    shared_tile<5>, shared_tile<6>};

}  // namespace

void sparse_gemm_avx2(const GemmArgs& a, size_t first_block, size_t block_count) {
  const size_t depth = a.weights->depth;
  // Row m's nonzero inputs among 8 from k0 (none at or past end). Past the
  // slice the lanes hold zero: never a term; unordered-or-not-equal: NaN
  // counts as nonzero, as in the dense sum.
  auto nonzero = [&a](size_t m, size_t k0, size_t end) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 v = avx2::load_or_fill(a.x + m * a.x_stride + k0, end - k0, zero);
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(v, zero, _CMP_NEQ_UQ)));
  };
  auto group = [&a](size_t m, size_t b0, size_t blocks, const uint32_t* list, size_t count,
                    x86::SliceEnds ends) { kRowGroups[blocks - 1](a, m, b0, list, count, ends); };
  if (a.rows < 2 || depth > x86::kListedPerChunk) {
    x86::run_listed_rows<8, kGroupBlocks>(a, first_block, block_count, depth, nonzero, group);
    return;
  }
  auto shared = [&a](size_t m0, size_t rows, size_t b0, size_t blocks, const uint32_t* list,
                     size_t count) {
    for (size_t b = b0; b < b0 + blocks; ++b) kSharedTiles[rows - 2](a, m0, b, list, count);
  };
  // Shared tiles up to 150% of the rows' own terms (x86/listed_rows.h).
  x86::run_shared_tiles<8, kGroupBlocks, kTileRows, 150>(a, first_block, block_count, depth, nonzero,
                                                         group, shared);
}

}  // namespace edgemt::kernels::f32
