// The SSRU cell with AVX2 (ssru_cell_avx2, ssru.h): the portable loop's
// bits, eight units at a time. exp8 is math::exp_f32 on eight lanes
// (avx2_math.h); the negation, add, division, products and sum round as
// the scalar ones do (no FMA: -ffp-contract=off, and none written here).
// max(c, 0) returns its second operand for NaN and for two zeros, as the
// scalar c > 0 ? c : 0. The scalar loop was 9-13% of a tiny11-sized SSRU
// student's decoder step at batch 32 (edgemt bench --profile,
// decoder-state).
#include <immintrin.h>

#include "kernels/ssru.h"
#include "kernels/x86/avx2_math.h"

namespace edgemt::kernels {

void ssru_cell_avx2(const float* gates, size_t d, bool first, float* cell, float* h) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 zero = _mm256_setzero_ps();
  const __m256 sign = _mm256_set1_ps(-0.0f);
  size_t i = 0;
  for (; i + 8 <= d; i += 8) {
    const __m256 candidate = _mm256_loadu_ps(gates + i);
    const __m256 minus_gate = _mm256_xor_ps(_mm256_loadu_ps(gates + d + i), sign);
    const __m256 f = _mm256_div_ps(one, _mm256_add_ps(one, avx2::exp8(minus_gate)));
    const __m256 previous = first ? zero : _mm256_loadu_ps(cell + i);
    const __m256 c = _mm256_add_ps(_mm256_mul_ps(f, previous),
                                   _mm256_mul_ps(_mm256_sub_ps(one, f), candidate));
    _mm256_storeu_ps(cell + i, c);
    _mm256_storeu_ps(h + i, _mm256_max_ps(c, zero));
  }
  // The last d % 8 units, as the portable loop (the same expression).
  ssru_cell_portable(gates, d, first, cell, h, i);
}

}  // namespace edgemt::kernels
