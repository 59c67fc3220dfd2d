// Building blocks of the AVX2 kernels that must give the portable kernels'
// bits (internal header; include only from files compiled with -mavx2):
// exp_f32 on 8 lanes, partial loads and stores of a row's tail, the
// eight-lane max and sums of kernels/reduce.h, an 8 × 8 transpose of 32-bit
// words. The eight lanes of kernels/reduce.h are one 256-bit register here:
// element i adds into lane i % 8 as in the portable loops.
#pragma once

#include "kernels/x86/intrinsics.h"  // first: see there

#include <cstddef>
#include <cstdint>

#include "kernels/reduce.h"

namespace edgemt::kernels::avx2 {

constexpr float kNegInf = -__builtin_huge_valf();

// exp_f32's reduction and polynomial: e^xc = p · 2^n, n returned in *ni.
inline __m256 exp8_reduced(__m256 xc, __m256i* ni) {
  const __m256 shifter = _mm256_set1_ps(12582912.0f);
  const __m256 t = _mm256_add_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)), shifter);
  const __m256 n = _mm256_sub_ps(t, shifter);
  *ni = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(shifter));
  __m256 r = _mm256_sub_ps(xc, _mm256_mul_ps(n, _mm256_set1_ps(0.693359375f)));
  r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(-2.12194440e-4f)));
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_add_ps(_mm256_mul_ps(p, _mm256_mul_ps(r, r)), r);
  return _mm256_add_ps(p, _mm256_set1_ps(1.0f));
}

// math::exp_f32 on 8 lanes, in its operations and order (no FMA).
inline __m256 exp8(__m256 x) {
  const __m256 min_x = _mm256_set1_ps(-104.0f);
  const __m256 max_x = _mm256_set1_ps(89.0f);
  const __m256i bias = _mm256_set1_epi32(127);
  __m256i ni;
  // Every lane in [-87, 88] (no NaN), as softmax and log-sum-exp inputs
  // nearly always are: the clamps change nothing, and n is in [-126, 127],
  // so 2^n is a normal float and p · 2^n in one multiply rounds as the
  // two-step scaling below does (whose first step, p · 2^(n/2), is exact).
  const __m256 in_range = _mm256_and_ps(_mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_GE_OQ),
                                        _mm256_cmp_ps(x, _mm256_set1_ps(88.0f), _CMP_LE_OQ));
  if (_mm256_movemask_ps(in_range) == 0xFF) {
    const __m256 p = exp8_reduced(x, &ni);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(ni, bias), 23)));
  }
  // Clamp; a NaN passes (both compares are false for it).
  const __m256 below = _mm256_cmp_ps(x, min_x, _CMP_LT_OQ);
  __m256 xc = _mm256_blendv_ps(x, min_x, below);
  xc = _mm256_blendv_ps(xc, max_x, _mm256_cmp_ps(xc, max_x, _CMP_GT_OQ));
  const __m256 p = exp8_reduced(xc, &ni);
  // n1 = ni / 2 rounded toward zero (C++ division), n2 = ni - n1.
  const __m256i n1 = _mm256_srai_epi32(_mm256_add_epi32(ni, _mm256_srli_epi32(ni, 31)), 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  return _mm256_blendv_ps(y, _mm256_setzero_ps(), below);
}

// All-ones in the first min(count, 8) lanes, zero in the rest.
inline __m256i tail_mask(size_t count) {
  alignas(32) static constexpr int32_t kOnes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                    0,  0,  0,  0,  0,  0,  0,  0};
  const size_t take = count >= 8 ? 8 : count;
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kOnes + 8 - take));
}

// x[0..count) (count <= 8 used) in the first lanes, `fill` in the rest.
inline __m256 load_tail(const float* x, size_t count, __m256 fill) {
  const __m256i mask = tail_mask(count);
  return _mm256_blendv_ps(fill, _mm256_maskload_ps(x, mask), _mm256_castsi256_ps(mask));
}

// Eight floats from x, or x[0..count) and `fill` past it near the end.
inline __m256 load_or_fill(const float* x, size_t count, __m256 fill) {
  return count >= 8 ? _mm256_loadu_ps(x) : load_tail(x, count, fill);
}

// Stores the first min(count, 8) lanes of v at x, as 4-, 2- and 1-lane
// stores: AMD's Zen cores run vmaskmovps's store form as microcode
// (BM_Attention, AVX2 kernel, Zen 4: Tq 15 Tk 15 head_dim 32 1731 -> 1381
// ns, its rows of 15 keys storing two tails each). `static`: files compiled
// for AVX-512 include this header too.
static inline void store_first(float* x, size_t count, __m256 v) {
  if (count >= 8) {
    _mm256_storeu_ps(x, v);
    return;
  }
  __m128 part = _mm256_castps256_ps128(v);
  if (count & 4) {
    _mm_storeu_ps(x, part);
    part = _mm256_extractf128_ps(v, 1);
    x += 4;
  }
  if (count & 2) {
    _mm_storel_pi(reinterpret_cast<__m64*>(x), part);
    part = _mm_movehl_ps(part, part);
    x += 2;
  }
  if (count & 1) _mm_store_ss(x, part);
}

inline float combine(__m256 acc) {
  alignas(32) float lanes[detail::kLanes];
  _mm256_store_ps(lanes, acc);
  return detail::combine_lanes(lanes);
}

// detail::max: the running max of lane i % 8 over the row, then the lanes in
// order.
inline float row_max(const float* x, size_t n) {
  const __m256 neg_inf = _mm256_set1_ps(kNegInf);
  __m256 acc = neg_inf;
  for (size_t i = 0; i < n; i += 8) {
    // max_ps(a, b) is a > b ? a : b, as the portable loop (NaN keeps b).
    acc = _mm256_max_ps(load_or_fill(x + i, n - i, neg_inf), acc);
  }
  alignas(32) float lanes[detail::kLanes];
  _mm256_store_ps(lanes, acc);
  float m = lanes[0];
  for (size_t l = 1; l < detail::kLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
  return m;
}

// r[i] = row i (8 words) -> r[k] = column k: pairs, then quads, then the
// two 128-bit halves. It only moves 32-bit words (floats or not, the same
// bits). `static`: files compiled for AVX-512 include this header too.
static inline void transpose8(__m256 (&r)[8]) {
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

// The eight per-key sums of lane sums, combined as detail::combine_lanes
// does each key's: transposed so that vector l holds lane l of every key,
// then ((l0 + l4) + (l1 + l5)) + ((l2 + l6) + (l3 + l7)) on all eight keys.
inline __m256 combine8(const __m256 (&acc)[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(acc[0], acc[1]), t1 = _mm256_unpackhi_ps(acc[0], acc[1]);
  const __m256 t2 = _mm256_unpacklo_ps(acc[2], acc[3]), t3 = _mm256_unpackhi_ps(acc[2], acc[3]);
  const __m256 t4 = _mm256_unpacklo_ps(acc[4], acc[5]), t5 = _mm256_unpackhi_ps(acc[4], acc[5]);
  const __m256 t6 = _mm256_unpacklo_ps(acc[6], acc[7]), t7 = _mm256_unpackhi_ps(acc[6], acc[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  // lane[l] holds lane l of keys 0..7.
  const __m256 lane0 = _mm256_permute2f128_ps(u0, u4, 0x20), lane4 = _mm256_permute2f128_ps(u0, u4, 0x31);
  const __m256 lane1 = _mm256_permute2f128_ps(u1, u5, 0x20), lane5 = _mm256_permute2f128_ps(u1, u5, 0x31);
  const __m256 lane2 = _mm256_permute2f128_ps(u2, u6, 0x20), lane6 = _mm256_permute2f128_ps(u2, u6, 0x31);
  const __m256 lane3 = _mm256_permute2f128_ps(u3, u7, 0x20), lane7 = _mm256_permute2f128_ps(u3, u7, 0x31);
  return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(lane0, lane4), _mm256_add_ps(lane1, lane5)),
                       _mm256_add_ps(_mm256_add_ps(lane2, lane6), _mm256_add_ps(lane3, lane7)));
}

}  // namespace edgemt::kernels::avx2
