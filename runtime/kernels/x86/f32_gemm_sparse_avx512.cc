// The zero-skipping f32 GEMM (f32_gemm_sparse.h) with AVX-512: one row at a
// time over a group of up to 8 blocks (8 accumulators of 16 columns); the
// row's nonzero inputs are listed 16 at a time (a compare into a mask and a
// compress), and each adds its term to every block's accumulator, in k
// order from the bias:
// the dense kernel's fused multiply-adds without the ones whose x is zero.
#include <cstdint>

#include "kernels/f32_gemm_sparse.h"
#include "kernels/row_groups.h"
#include "kernels/x86/avx512_math.h"
#include "kernels/x86/nonzero_list.h"

namespace edgemt::kernels::f32 {
namespace {

constexpr size_t kGroupBlocks = 8;  // 128 columns; 8 x K x 64 bytes of weights

template <size_t kBlocks>
void row_group(const GemmArgs& a, size_t m, size_t b0) {
  const PackedWeights& w = *a.weights;
  const size_t depth = w.depth;
  const size_t step = depth * kBlockColumns;  // floats between blocks
  const float* block = w.blocks + b0 * step;
  __m512 acc[kBlocks];
  for (size_t j = 0; j < kBlocks; ++j) acc[j] = _mm512_load_ps(w.bias + (b0 + j) * kBlockColumns);
  const float* x = a.x + m * a.x_stride;
  // The row's nonzero inputs listed a slice at a time (x86/nonzero_list.h).
  auto nonzero = [x](size_t k0, size_t end) {
    const __mmask16 valid = avx512::tail_mask(end - k0);
    const __m512 v = _mm512_maskz_loadu_ps(valid, x + k0);
    // Unordered-or-not-equal: NaN counts as nonzero, as in the dense sum.
    return _mm512_mask_cmp_ps_mask(valid, v, _mm512_setzero_ps(), _CMP_NEQ_UQ);
  };
  x86::for_each_listed<16>(depth, nonzero, [&](size_t k) {
    const __m512 xk = _mm512_set1_ps(x[k]);
    const float* wk = block + k * kBlockColumns;
    for (size_t j = 0; j < kBlocks; ++j) acc[j] = _mm512_fmadd_ps(xk, _mm512_load_ps(wk + j * step), acc[j]);
  });
  // XNNPACK's clamp, as the dense kernel: max_ps(acc, low) is acc > low ? acc : low.
  const __m512 low = _mm512_set1_ps(a.relu ? 0.0f : -__builtin_huge_valf());
  for (size_t j = 0; j < kBlocks; ++j) {
    const size_t n0 = (b0 + j) * kBlockColumns;
    _mm512_mask_storeu_ps(a.y + m * a.y_stride + n0, avx512::tail_mask(w.columns - n0),
                          _mm512_max_ps(acc[j], low));
  }
}

using RowGroup = void (*)(const GemmArgs&, size_t, size_t);
constexpr RowGroup kRowGroups[kGroupBlocks] = {row_group<1>, row_group<2>, row_group<3>,
                                               row_group<4>, row_group<5>, row_group<6>,
                                               row_group<7>, row_group<8>};

}  // namespace

void sparse_gemm_avx512(const GemmArgs& a, size_t first_block, size_t block_count) {
  run_row_groups(a, first_block, block_count, kRowGroups);
}

}  // namespace edgemt::kernels::f32
