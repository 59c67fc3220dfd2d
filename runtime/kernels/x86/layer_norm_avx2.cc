// LayerNorm's rows with AVX2 (normalize_rows_avx2, layer_norm.h; layer_norm.cc
// picks it on x86 CPUs that have AVX2): the portable row's bits. The
// portable row sums in detail::kLanes = 8 lanes, element i into lane i % 8
// in index order, the first sum in blocks of detail::kBlock; the eight
// lanes are one register here. Past the end of a row the sums add
// +0, which changes no lane (a lane starts at +0 and never becomes -0), and
// the last pass loads and stores only the row's own elements. The portable
// row compiles to SSE2 (four lanes): at batch 32 × beam 4 it took 2.5% of
// int8 decode time on a Zen 3 VM.
//
// A row's sums are chains of dependent adds (dim / 8 of them per sum), so
// one row at a time waits on the adder's latency; normalize_rows_avx2 runs
// four rows side by side, each with its own chains in the same order, and
// adds a residual in its first pass (BM_AddLayerNorm, dim 256, Zen 4, cpu
// family 25: 32 rows 4.2-4.4 -> 2.0-2.1 us, 320 rows 42-45 -> 20 us).
#include <immintrin.h>

#include <cmath>

#include "kernels/layer_norm.h"
#include "kernels/reduce.h"
#include "kernels/x86/avx2_math.h"

namespace edgemt::kernels {
namespace {

using avx2::combine;
using avx2::store_first;
using avx2::tail_mask;

// x[0..count) (count <= 8 used), +0 past it.
inline __m256 load_or_zero(const float* x, size_t count) {
  return count >= 8 ? _mm256_loadu_ps(x) : _mm256_maskload_ps(x, tail_mask(count));
}

// layer_norm.cc's normalize_row on kRows rows of `dim` floats at once (x, y:
// [kRows, dim]; y may equal x): every row's operations in its order.
// With a residual the rows are fl(x + residual), written to y by the first
// pass and read from there (y may alias x or residual).
template <size_t kRows>
void normalize_group(const float* x, const float* residual, const float* gamma, const float* beta,
                     size_t dim, float eps, float* y) {
  const float inv_dim = 1.0f / static_cast<float>(dim);
  float total[kRows] = {};
  for (size_t b = 0; b < dim; b += detail::kBlock) {  // row_sum
    const size_t len = dim - b < detail::kBlock ? dim - b : detail::kBlock;
    __m256 acc[kRows];
    for (__m256& a : acc) a = _mm256_setzero_ps();
    for (size_t i = 0; i < len; i += 8) {
      for (size_t r = 0; r < kRows; ++r) {
        const size_t at = r * dim + b + i;
        __m256 v = load_or_zero(x + at, len - i);
        if (residual != nullptr) {
          v = _mm256_add_ps(v, load_or_zero(residual + at, len - i));
          store_first(y + at, len - i, v);
        }
        acc[r] = _mm256_add_ps(acc[r], v);
      }
    }
    for (size_t r = 0; r < kRows; ++r) total[r] += combine(acc[r]);
  }
  if (residual != nullptr) x = y;
  __m256 mean0[kRows], acc[kRows], acc2[kRows];
  for (size_t r = 0; r < kRows; ++r) {
    mean0[r] = _mm256_set1_ps(total[r] * inv_dim);
    acc[r] = acc2[r] = _mm256_setzero_ps();
  }
  for (size_t i = 0; i < dim; i += 8) {
    for (size_t r = 0; r < kRows; ++r) {
      __m256 d = _mm256_sub_ps(load_or_zero(x + r * dim + i, dim - i), mean0[r]);
      if (dim - i < 8) d = _mm256_and_ps(d, _mm256_castsi256_ps(tail_mask(dim - i)));
      acc[r] = _mm256_add_ps(acc[r], d);
      acc2[r] = _mm256_add_ps(acc2[r], _mm256_mul_ps(d, d));
    }
  }
  __m256 correction[kRows], rstd[kRows];
  for (size_t r = 0; r < kRows; ++r) {
    const float c = combine(acc[r]) * inv_dim;
    float var = combine(acc2[r]) * inv_dim - c * c;
    var = var < 0.0f ? 0.0f : var;
    correction[r] = _mm256_set1_ps(c);
    rstd[r] = _mm256_set1_ps(1.0f / std::sqrt(var + eps));
  }
  for (size_t i = 0; i < dim; i += 8) {
    const size_t count = dim - i;
    const __m256 g = load_or_zero(gamma + i, count), b = load_or_zero(beta + i, count);
    for (size_t r = 0; r < kRows; ++r) {
      const __m256 centered =
          _mm256_sub_ps(_mm256_sub_ps(load_or_zero(x + r * dim + i, count), mean0[r]), correction[r]);
      store_first(y + r * dim + i, count,
                  _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(centered, rstd[r]), g), b));
    }
  }
}

}  // namespace

void normalize_rows_avx2(const float* x, const float* residual, const float* gamma,
                         const float* beta, size_t rows, size_t dim, float eps, float* y) {
  size_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    normalize_group<4>(x + r * dim, residual ? residual + r * dim : nullptr, gamma, beta, dim, eps,
                       y + r * dim);
  }
  for (; r < rows; ++r) {
    normalize_group<1>(x + r * dim, residual ? residual + r * dim : nullptr, gamma, beta, dim, eps,
                       y + r * dim);
  }
}

}  // namespace edgemt::kernels
