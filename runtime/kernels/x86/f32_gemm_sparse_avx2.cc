// The zero-skipping f32 GEMM (f32_gemm_sparse.h) with AVX2 and FMA3: one row
// at a time over a group of up to 4 blocks (8 accumulators of 8 columns);
// the row's nonzero inputs are listed 8 at a time (a compare, its sign bits
// and a table of their positions), once for all its groups (x86/
// listed_rows.h), and each adds its term to every accumulator, in k order
// from the bias: the dense kernel's fused multiply-adds without the ones
// whose x is zero.
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

}  // namespace

void sparse_gemm_avx2(const GemmArgs& a, size_t first_block, size_t block_count) {
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
  x86::run_listed_rows<8, kGroupBlocks>(a, first_block, block_count, a.weights->depth, nonzero,
                                         group);
}

}  // namespace edgemt::kernels::f32
