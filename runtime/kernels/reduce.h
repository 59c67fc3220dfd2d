// Fixed-order reductions shared by the kernels (internal header).
//
// A reduction is split over kLanes independent partial sums: element i goes
// to lane i % kLanes, lanes are combined in a fixed tree. Each lane is an
// ordinary sequential sum, so GCC -O3 vectorizes the loop without
// reassociating anything (no -ffast-math), and the result is the same bits on
// every ISA and vector width. It is also more accurate than one running sum.
#pragma once

#include <cstddef>

namespace edgemt::kernels::detail {

inline constexpr size_t kLanes = 8;

inline float combine_lanes(const float* acc) {
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

// Elements per block of the blocked sums: each block is reduced in kLanes
// lanes, block results are added in order. Keeps the rounding error of long
// rows (a 32000-entry vocabulary softmax) near that of pairwise summation.
inline constexpr size_t kBlock = 512;

// sum(x[0..n)) for n <= kBlock.
inline float sum_block(const float* __restrict x, size_t n) {
  float acc[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) acc[l] += x[i + l];
  }
  for (size_t l = 0; i + l < n; ++l) acc[l] += x[i + l];
  return combine_lanes(acc);
}

// sum(x[0..n))
inline float sum(const float* __restrict x, size_t n) {
  float total = 0.0f;
  for (size_t i = 0; i < n; i += kBlock) total += sum_block(x + i, n - i < kBlock ? n - i : kBlock);
  return total;
}

// Deviations from c: *sum_d = sum(x[i] - c), *sum_d2 = sum((x[i] - c)²).
inline void sum_deviations(const float* __restrict x, size_t n, float c, float* sum_d,
                           float* sum_d2) {
  float acc[kLanes] = {};
  float acc2[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) {
      const float d = x[i + l] - c;
      acc[l] += d;
      acc2[l] += d * d;
    }
  }
  for (size_t l = 0; i + l < n; ++l) {
    const float d = x[i + l] - c;
    acc[l] += d;
    acc2[l] += d * d;
  }
  *sum_d = combine_lanes(acc);
  *sum_d2 = combine_lanes(acc2);
}

// dot(a, b) over n elements.
inline float dot(const float* __restrict a, const float* __restrict b, size_t n) {
  float acc[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  }
  for (size_t l = 0; i + l < n; ++l) acc[l] += a[i + l] * b[i + l];
  return combine_lanes(acc);
}

// max(x[0..n)), ignoring NaN; -inf for n == 0. Written as a comparison (not
// fmax) so it maps onto max instructions and avoids a GCC 12 AArch64 ICE.
inline float max(const float* __restrict x, size_t n) {
  constexpr float kNegInf = -__builtin_huge_valf();
  float acc[kLanes] = {kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) acc[l] = x[i + l] > acc[l] ? x[i + l] : acc[l];
  }
  for (size_t l = 0; i + l < n; ++l) acc[l] = x[i + l] > acc[l] ? x[i + l] : acc[l];
  float m = acc[0];
  for (size_t l = 1; l < kLanes; ++l) m = acc[l] > m ? acc[l] : m;
  return m;
}

}  // namespace edgemt::kernels::detail
