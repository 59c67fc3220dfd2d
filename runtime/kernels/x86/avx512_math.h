// Building blocks of the AVX-512 kernels that must give the portable
// kernels' bits (internal header; include only from files compiled with
// -mavx512f -mavx512bw -mavx512vl -mavx512dq): exp_f32 on 16 lanes, the
// eight-lane max and sums of kernels/reduce.h, a 16 × 16 transpose.
#pragma once

#include "kernels/x86/intrinsics.h"  // first: see there

#include <cstddef>
#include <cstdint>

#include "kernels/reduce.h"

namespace edgemt::kernels::avx512 {

constexpr float kNegInf = -__builtin_huge_valf();

// math::exp_f32 on 16 lanes.
inline __m512 exp16(__m512 x) {
  const __m512 min_x = _mm512_set1_ps(-104.0f);
  const __m512 max_x = _mm512_set1_ps(89.0f);
  const __m512 shifter = _mm512_set1_ps(12582912.0f);
  // Clamp; a NaN passes (both compares are false for it).
  const __mmask16 below = _mm512_cmp_ps_mask(x, min_x, _CMP_LT_OQ);
  __m512 xc = _mm512_mask_blend_ps(below, x, min_x);
  xc = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(xc, max_x, _CMP_GT_OQ), xc, max_x);
  const __m512 t = _mm512_add_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)), shifter);
  const __m512 n = _mm512_sub_ps(t, shifter);
  const __m512i ni = _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_castps_si512(shifter));
  __m512 r = _mm512_sub_ps(xc, _mm512_mul_ps(n, _mm512_set1_ps(0.693359375f)));
  r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(-2.12194440e-4f)));
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_add_ps(_mm512_mul_ps(p, _mm512_mul_ps(r, r)), r);
  p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
  // n1 = ni / 2 rounded toward zero (C++ division), n2 = ni - n1.
  const __m512i n1 = _mm512_srai_epi32(_mm512_add_epi32(ni, _mm512_srli_epi32(ni, 31)), 1);
  const __m512i n2 = _mm512_sub_epi32(ni, n1);
  const __m512i bias = _mm512_set1_epi32(127);
  const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
  const __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
  const __m512 y = _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
  return _mm512_mask_blend_ps(below, y, _mm512_setzero_ps());
}

inline __mmask16 tail_mask(size_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xFFFF)
                     : static_cast<__mmask16>((1u << count) - 1u);
}

inline float combine(__m256 acc) {
  alignas(32) float lanes[detail::kLanes];
  _mm256_store_ps(lanes, acc);
  return detail::combine_lanes(lanes);
}

// detail::max: the running max of lane i % 8 over the row, then the lanes in
// order.
inline float row_max(const float* x, size_t n) {
  __m256 acc = _mm256_set1_ps(kNegInf);
  for (size_t i = 0; i < n; i += 16) {
    const __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(kNegInf), tail_mask(n - i), x + i);
    // max_ps(a, b) is a > b ? a : b, as the portable loop (NaN keeps b).
    acc = _mm256_max_ps(_mm512_castps512_ps256(v), acc);
    acc = _mm256_max_ps(_mm512_extractf32x8_ps(v, 1), acc);
  }
  alignas(32) float lanes[detail::kLanes];
  _mm256_store_ps(lanes, acc);
  float m = lanes[0];
  for (size_t l = 1; l < detail::kLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
  return m;
}

// The transpose's steps and the transpose. Static: TUs built with other
// -m flags (the VNNI kernels) may define their own.
static inline __m512 unpack_low_pairs(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
static inline __m512 unpack_high_pairs(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}

// r[i] = row i (16 floats) -> r[k] = column k: four stages, each
// interleaving twice the width of the stage before (1, 2, 4, then 8
// floats).
static inline void transpose16(__m512 r[16]) {
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

}  // namespace edgemt::kernels::avx512
