#include "kernels/vocab_row.h"

#include <cmath>
#include <cstdint>

#include "core/cpu_features.h"
#include "kernels/portable_vectors.h"

namespace edgemt::kernels {

size_t argmax(const float* x, size_t n) {
  size_t best = n;
  float best_value = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    // NaN fails both tests: never taken, never displaces.
    if (best == n ? x[i] == x[i] : x[i] > best_value) {
      best = i;
      best_value = x[i];
    }
  }
  return best;
}

bool log_sum_exp_finite(const float* x, size_t n) {
  // On the bit patterns (int32): |x| above +inf's is a NaN; +inf itself;
  // anything but -inf makes the max larger than -inf.
  Ints4 bad = {0, 0, 0, 0};
  Ints4 above_neg_inf = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const Ints4 bits = load_bits4(x + i);
    bad |= ((bits & kAbsMask) > kInfBits) | (bits == kInfBits);
    above_neg_inf |= bits != kNegInfBits;
  }
  bool any_bad = any_lane(bad);
  bool any_above = any_lane(above_neg_inf);
  for (; i < n; ++i) {
    any_bad |= std::isnan(x[i]) || x[i] == INFINITY;
    any_above |= x[i] != -INFINITY;
  }
  return !any_bad && any_above;
}

size_t first_above(const float* x, size_t begin, size_t n, float base, RowNormalizer norm,
                   float threshold) {
  for (size_t v = begin; v < n; ++v) {
    if (beam_score(x[v], base, norm) > threshold) return v;
  }
  return n;
}

size_t available_vocab_row_kernels(VocabRowKernels* out, size_t capacity) {
  VocabRowKernels all[3];
  size_t count = 0;
  const CpuFeatures& cpu = cpu_features();
#if defined(__x86_64__)
  if (cpu.avx512) {
    all[count++] = {normalize_row_avx512, argmax_avx512, first_above_avx512, "avx512", 300};
  }
  if (cpu.avx2) all[count++] = {normalize_row_avx2, argmax_avx2, first_above_avx2, "avx2", 600};
#endif
  (void)cpu;
  all[count++] = {normalize_row, argmax, first_above, "portable", 2000};
  const size_t written = count < capacity ? count : capacity;
  for (size_t i = 0; i < written; ++i) out[i] = all[i];
  return written;
}

VocabRowKernels best_vocab_row_kernels() {
  VocabRowKernels best;
  (void)available_vocab_row_kernels(&best, 1);
  return best;
}

}  // namespace edgemt::kernels
