// The vocabulary-row passes (vocab_row.h) with AVX-512: the same bits as the
// portable ones. exp is portable_math.h's exp_f32 written out in the same
// operations and order (no FMA: -ffp-contract=off), 16 lanes at a time; the
// sums keep the portable eight lanes (element i adds into lane i % 8, in
// index order) and combine them with the same tree, so a 16-wide chunk adds
// its low eight and then its high eight.
#include "kernels/portable_math.h"
#include "kernels/vocab_row.h"
#include "kernels/x86/avx512_math.h"

namespace edgemt::kernels {

using avx512::combine;
using avx512::exp16;
using avx512::kNegInf;
using avx512::row_max;
using avx512::tail_mask;

RowNormalizer normalize_row_avx512(const float* x, size_t n) {
  RowNormalizer norm;
  norm.max = row_max(x, n);
  if (norm.max == kNegInf) return norm;
  const __m512 m = _mm512_set1_ps(norm.max);
  float total = 0.0f;
  // Blocks of detail::kBlock, each summed in eight lanes (softmax.cc).
  for (size_t b = 0; b < n; b += detail::kBlock) {
    const size_t len = n - b < detail::kBlock ? n - b : detail::kBlock;
    const float* xb = x + b;
    __m256 acc = _mm256_setzero_ps();
    for (size_t i = 0; i < len; i += 16) {
      // Lanes past the end load -inf: e^-inf = +0 leaves a sum unchanged.
      const __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(kNegInf), tail_mask(len - i), xb + i);
      const __m512 e = exp16(_mm512_sub_ps(v, m));
      acc = _mm256_add_ps(acc, _mm512_castps512_ps256(e));
      acc = _mm256_add_ps(acc, _mm512_extractf32x8_ps(e, 1));
    }
    total += combine(acc);
  }
  norm.log_total = static_cast<float>(math::log_f64(static_cast<double>(total)));
  return norm;
}

size_t argmax_avx512(const float* x, size_t n) {
  const float m = row_max(x, n);
  // The first entry equal to the max (NaN equals nothing; n when all NaN).
  const __m512 target = _mm512_set1_ps(m);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 valid = tail_mask(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(valid, x + i);
    const __mmask16 hit = _mm512_mask_cmp_ps_mask(valid, v, target, _CMP_EQ_OQ);
    if (hit != 0) return i + static_cast<size_t>(__builtin_ctz(hit));
  }
  return n;
}

size_t first_above_avx512(const float* x, size_t begin, size_t n, float base, RowNormalizer norm,
                          float threshold) {
  const __m512 vbase = _mm512_set1_ps(base);
  const __m512 vmax = _mm512_set1_ps(norm.max);
  const __m512 vlog = _mm512_set1_ps(norm.log_total);
  const __m512 vthreshold = _mm512_set1_ps(threshold);
  for (size_t i = begin; i < n; i += 16) {
    const __mmask16 valid = tail_mask(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(valid, x + i);
    // beam_score: base + ((x - max) - log_total).
    const __m512 score = _mm512_add_ps(vbase, _mm512_sub_ps(_mm512_sub_ps(v, vmax), vlog));
    const __mmask16 hit = _mm512_mask_cmp_ps_mask(valid, score, vthreshold, _CMP_GT_OQ);
    if (hit != 0) return i + static_cast<size_t>(__builtin_ctz(hit));
  }
  return n;
}

}  // namespace edgemt::kernels
