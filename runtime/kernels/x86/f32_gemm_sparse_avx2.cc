// The zero-skipping f32 GEMM (f32_gemm_sparse.h) with AVX2 and FMA3: one row
// at a time over a group of up to 4 blocks (8 accumulators of 8 columns);
// the row's nonzero inputs are listed 8 at a time (a compare, its sign bits
// and a table of their positions), and each adds its term to every
// accumulator, in k order from the bias: the dense kernel's fused
// multiply-adds without the ones whose x is zero.
#include <cstdint>

#include "kernels/f32_gemm_sparse.h"
#include "kernels/row_groups.h"
#include "kernels/x86/avx2_math.h"
#include "kernels/x86/nonzero_list.h"

namespace edgemt::kernels::f32 {
namespace {

constexpr size_t kGroupBlocks = 4;  // 64 columns

template <size_t kBlocks>
void row_group(const GemmArgs& a, size_t m, size_t b0) {
  const PackedWeights& w = *a.weights;
  const size_t depth = w.depth;
  const size_t step = depth * kBlockColumns;  // floats between blocks
  const float* block = w.blocks + b0 * step;
  __m256 acc[kBlocks][2];
  for (size_t j = 0; j < kBlocks; ++j) {
    acc[j][0] = _mm256_load_ps(w.bias + (b0 + j) * kBlockColumns);
    acc[j][1] = _mm256_load_ps(w.bias + (b0 + j) * kBlockColumns + 8);
  }
  const float* x = a.x + m * a.x_stride;
  // The row's nonzero inputs listed a slice at a time (x86/nonzero_list.h).
  auto nonzero = [x](size_t k0, size_t end) {
    const __m256 zero = _mm256_setzero_ps();
    // Past the slice the lanes hold zero: never a term.
    const __m256 v = avx2::load_or_fill(x + k0, end - k0, zero);
    // Unordered-or-not-equal: NaN counts as nonzero, as in the dense sum.
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(v, zero, _CMP_NEQ_UQ)));
  };
  x86::for_each_listed<8>(depth, nonzero, [&](size_t k) {
    const __m256 xk = _mm256_set1_ps(x[k]);
    const float* wk = block + k * kBlockColumns;
    for (size_t j = 0; j < kBlocks; ++j) {
      acc[j][0] = _mm256_fmadd_ps(xk, _mm256_load_ps(wk + j * step), acc[j][0]);
      acc[j][1] = _mm256_fmadd_ps(xk, _mm256_load_ps(wk + j * step + 8), acc[j][1]);
    }
  });
  // XNNPACK's clamp, as the dense kernel: max_ps(acc, low) is acc > low ? acc : low.
  const __m256 low = _mm256_set1_ps(a.relu ? 0.0f : -__builtin_huge_valf());
  for (size_t j = 0; j < kBlocks; ++j) {
    const size_t n0 = (b0 + j) * kBlockColumns;
    const size_t width = w.columns - n0;
    float* y = a.y + m * a.y_stride + n0;
    const __m256 lo = _mm256_max_ps(acc[j][0], low), hi = _mm256_max_ps(acc[j][1], low);
    if (width >= kBlockColumns) {
      _mm256_storeu_ps(y, lo);
      _mm256_storeu_ps(y + 8, hi);
    } else {
      _mm256_maskstore_ps(y, avx2::tail_mask(width), lo);
      if (width > 8) _mm256_maskstore_ps(y + 8, avx2::tail_mask(width - 8), hi);
    }
  }
}

using RowGroup = void (*)(const GemmArgs&, size_t, size_t);
constexpr RowGroup kRowGroups[kGroupBlocks] = {row_group<1>, row_group<2>, row_group<3>,
                                               row_group<4>};

}  // namespace

void sparse_gemm_avx2(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_row_groups(a, first_block, block_count, kRowGroups);
}

}  // namespace edgemt::kernels::f32
