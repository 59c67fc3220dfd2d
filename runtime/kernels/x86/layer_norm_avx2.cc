// LayerNorm's row with AVX2 (normalize_row_avx2, layer_norm.h; layer_norm.cc
// runs the row loops and picks it on x86 CPUs that have AVX2): the portable
// row's bits. The portable row sums in detail::kLanes = 8 lanes, element i
// into lane i % 8 in index order, the first sum in blocks of detail::kBlock;
// the eight lanes are one register here. Past the end of a row the sums add
// +0, which changes no lane (a lane starts at +0 and never becomes -0), and
// the last pass loads and stores only the row's own elements. The portable
// row compiles to SSE2 (four lanes): at batch 32 × beam 4 it took 2.5% of
// int8 decode time on a Zen 3 VM.
#include <immintrin.h>

#include <cmath>

#include "kernels/layer_norm.h"
#include "kernels/reduce.h"
#include "kernels/x86/avx2_math.h"

namespace edgemt::kernels {
namespace {

using avx2::combine;
using avx2::tail_mask;

// x[0..count) (count <= 8 used), +0 past it.
inline __m256 load_or_zero(const float* x, size_t count) {
  return count >= 8 ? _mm256_loadu_ps(x) : _mm256_maskload_ps(x, tail_mask(count));
}

// detail::sum(x[0..n)): blocks of detail::kBlock, each in eight lanes.
float row_sum(const float* x, size_t n) {
  float total = 0.0f;
  for (size_t b = 0; b < n; b += detail::kBlock) {
    const size_t len = n - b < detail::kBlock ? n - b : detail::kBlock;
    __m256 acc = _mm256_setzero_ps();
    for (size_t i = 0; i < len; i += 8) acc = _mm256_add_ps(acc, load_or_zero(x + b + i, len - i));
    total += combine(acc);
  }
  return total;
}

}  // namespace

// layer_norm.cc's normalize_row: the same operations in the same order.
void normalize_row_avx2(const float* x, const float* gamma, const float* beta, size_t dim,
                        float eps, float* y) {
  const float inv_dim = 1.0f / static_cast<float>(dim);
  const float mean0 = row_sum(x, dim) * inv_dim;
  // detail::sum_deviations: d = x - mean0 summed, and d², in eight lanes
  // (one block); lanes past the end add +0.
  const __m256 vmean0 = _mm256_set1_ps(mean0);
  __m256 acc = _mm256_setzero_ps(), acc2 = _mm256_setzero_ps();
  for (size_t i = 0; i < dim; i += 8) {
    __m256 d = _mm256_sub_ps(load_or_zero(x + i, dim - i), vmean0);
    if (dim - i < 8) d = _mm256_and_ps(d, _mm256_castsi256_ps(tail_mask(dim - i)));
    acc = _mm256_add_ps(acc, d);
    acc2 = _mm256_add_ps(acc2, _mm256_mul_ps(d, d));
  }
  const float correction = combine(acc) * inv_dim;
  float var = combine(acc2) * inv_dim - correction * correction;
  var = var < 0.0f ? 0.0f : var;
  const float rstd = 1.0f / std::sqrt(var + eps);
  // y = ((x - mean0) - correction) * rstd * gamma + beta
  const __m256 vcorrection = _mm256_set1_ps(correction), vrstd = _mm256_set1_ps(rstd);
  for (size_t i = 0; i < dim; i += 8) {
    const size_t count = dim - i;
    const __m256 centered =
        _mm256_sub_ps(_mm256_sub_ps(load_or_zero(x + i, count), vmean0), vcorrection);
    const __m256 out = _mm256_add_ps(
        _mm256_mul_ps(_mm256_mul_ps(centered, vrstd), load_or_zero(gamma + i, count)),
        load_or_zero(beta + i, count));
    if (count >= 8) {
      _mm256_storeu_ps(y + i, out);
    } else {
      _mm256_maskstore_ps(y + i, tail_mask(count), out);
    }
  }
}

}  // namespace edgemt::kernels
