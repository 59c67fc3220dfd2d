// pack_block (f32_gemm.h) for 16 whole rows read with stride 1, with AVX2:
// 8 depth steps at a time, the rows' 16 × 8 floats transposed in registers
// as two 8 × 8 squares (columns 0-7 and 8-15 of each 64-byte line). The
// same floats moved, so the same bits; the depth's last steps past a
// multiple of 8 as the portable loop does them.
#include <immintrin.h>

#include "kernels/f32_gemm.h"

namespace edgemt::kernels::f32 {
namespace {

// r[i] = row i (8 floats) -> r[k] = column k: pairs, then quads, then the
// two 128-bit halves.
void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x20);
    r[j + 4] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x31);
  }
}

}  // namespace

void pack_rows_block_avx2(const float* const* lanes, size_t depth, float* block) {
  constexpr size_t kSteps = 8;
  size_t k = 0;
  for (; k + kSteps <= depth; k += kSteps) {
    for (size_t half = 0; half < 2; ++half) {  // columns 0-7, then 8-15
      __m256 r[8];
      for (size_t c = 0; c < 8; ++c) r[c] = _mm256_loadu_ps(lanes[half * 8 + c] + k);
      transpose8(r);
      for (size_t i = 0; i < kSteps; ++i) _mm256_storeu_ps(block + (k + i) * kBlockColumns + half * 8, r[i]);
    }
  }
  for (; k < depth; ++k) {
    for (size_t c = 0; c < kBlockColumns; ++c) block[k * kBlockColumns + c] = lanes[c][k];
  }
}

}  // namespace edgemt::kernels::f32
