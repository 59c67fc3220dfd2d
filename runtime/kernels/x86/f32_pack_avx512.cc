// pack_block (f32_gemm.h) for 16 whole rows read with stride 1, with
// AVX-512: 16 depth steps at a time, the rows' 16 × 16 floats transposed in
// registers (the portable loop reads and writes one float at a time). The
// same floats moved, so the same bits; the depth's last steps past a
// multiple of 16 as the portable loop does them.
#include "kernels/f32_gemm.h"
#include "kernels/x86/avx512_math.h"  // <immintrin.h>, GCC 12's warnings about it off

namespace edgemt::kernels::f32 {
namespace {

__m512 unpack_low_pairs(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
__m512 unpack_high_pairs(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}

// r[i] = row i (16 floats) -> r[k] = column k: four stages, each
// interleaving twice the width of the stage before (1, 2, 4, then 8
// floats).
void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = unpack_low_pairs(t[i], t[i + 2]);
    r[i + 1] = unpack_high_pairs(t[i], t[i + 2]);
    r[i + 2] = unpack_low_pairs(t[i + 1], t[i + 3]);
    r[i + 3] = unpack_high_pairs(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 16; i += 8) {
    for (int j = 0; j < 4; ++j) {
      t[i + j] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0x88);
      t[i + j + 4] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0xdd);
    }
  }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xdd);
  }
}

}  // namespace

void pack_rows_block_avx512(const float* const* lanes, size_t depth, float* block) {
  size_t k = 0;
  for (; k + kBlockColumns <= depth; k += kBlockColumns) {
    __m512 r[16];
    for (size_t c = 0; c < kBlockColumns; ++c) r[c] = _mm512_loadu_ps(lanes[c] + k);
    transpose16(r);
    for (size_t i = 0; i < kBlockColumns; ++i) _mm512_storeu_ps(block + (k + i) * kBlockColumns, r[i]);
  }
  for (; k < depth; ++k) {
    for (size_t c = 0; c < kBlockColumns; ++c) block[k * kBlockColumns + c] = lanes[c][k];
  }
}

}  // namespace edgemt::kernels::f32
