// The vocabulary-row passes (vocab_row.h) with AVX2, for x86 CPUs without
// AVX-512: the same bits as the portable ones. exp is portable_math.h's
// exp_f32 written out in the same operations and order (no FMA:
// -ffp-contract=off), and the sums keep the portable eight lanes, which are
// one register here (element i adds into lane i % 8, in index order).
#include "kernels/portable_math.h"
#include "kernels/vocab_row.h"
#include "kernels/x86/avx2_math.h"

namespace edgemt::kernels {

using avx2::combine;
using avx2::exp8;
using avx2::kNegInf;
using avx2::load_or_fill;
using avx2::row_max;

RowNormalizer normalize_row_avx2(const float* x, size_t n) {
  RowNormalizer norm;
  norm.max = row_max(x, n);
  if (norm.max == kNegInf) return norm;
  const __m256 m = _mm256_set1_ps(norm.max);
  const __m256 neg_inf = _mm256_set1_ps(kNegInf);
  float total = 0.0f;
  // Blocks of detail::kBlock, each summed in eight lanes (softmax.cc).
  for (size_t b = 0; b < n; b += detail::kBlock) {
    const size_t len = n - b < detail::kBlock ? n - b : detail::kBlock;
    const float* xb = x + b;
    __m256 acc = _mm256_setzero_ps();
    for (size_t i = 0; i < len; i += 8) {
      // Lanes past the end load -inf: e^-inf = +0 leaves a sum unchanged.
      acc = _mm256_add_ps(acc, exp8(_mm256_sub_ps(load_or_fill(xb + i, len - i, neg_inf), m)));
    }
    total += combine(acc);
  }
  norm.log_total = static_cast<float>(math::log_f64(static_cast<double>(total)));
  return norm;
}

size_t argmax_avx2(const float* x, size_t n) {
  const float m = row_max(x, n);
  // The first entry equal to the max (NaN equals nothing; n when all NaN).
  // Lanes past the end hold NaN, which equals nothing.
  const __m256 target = _mm256_set1_ps(m);
  const __m256 nan = _mm256_set1_ps(__builtin_nanf(""));
  for (size_t i = 0; i < n; i += 8) {
    const __m256 v = load_or_fill(x + i, n - i, nan);
    const int hit = _mm256_movemask_ps(_mm256_cmp_ps(v, target, _CMP_EQ_OQ));
    if (hit != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(hit)));
  }
  return n;
}

size_t first_above_avx2(const float* x, size_t begin, size_t n, float base, RowNormalizer norm,
                        float threshold) {
  const __m256 vbase = _mm256_set1_ps(base);
  const __m256 vmax = _mm256_set1_ps(norm.max);
  const __m256 vlog = _mm256_set1_ps(norm.log_total);
  const __m256 vthreshold = _mm256_set1_ps(threshold);
  const __m256 nan = _mm256_set1_ps(__builtin_nanf(""));
  for (size_t i = begin; i < n; i += 8) {
    // Lanes past the end hold NaN: a NaN score is above nothing.
    const __m256 v = load_or_fill(x + i, n - i, nan);
    // beam_score: base + ((x - max) - log_total).
    const __m256 score = _mm256_add_ps(vbase, _mm256_sub_ps(_mm256_sub_ps(v, vmax), vlog));
    const int hit = _mm256_movemask_ps(_mm256_cmp_ps(score, vthreshold, _CMP_GT_OQ));
    if (hit != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(hit)));
  }
  return n;
}

}  // namespace edgemt::kernels
