// Passes over one row of logits (one hypothesis, the whole target
// vocabulary), the search's inner loops: the row's normalizer, its arg-max,
// and a scan for the entries whose beam score beats a threshold. Each runs
// once per hypothesis per decoder step, so at batch 32 × beam 4 over an 8k
// vocabulary they touch a million floats per step; the CPU-specific variants
// (x86/vocab_row_avx512.cc) compute the same bits as the portable ones, 16
// lanes at a time, in the portable ones' order.
#pragma once

#include <cstddef>

namespace edgemt::kernels {

// log_softmax(x)[v] = (x[v] - max) - log_total, exactly as log_softmax()
// (softmax.h) computes it; log_sum_exp(x) = max + log_total. An all -inf (or
// empty) row has max = -inf and log_total = 0.
struct RowNormalizer {
  float max = 0.0f;
  float log_total = 0.0f;
};

// The beam score of entry v: base + log_softmax(x)[v], in that order.
inline float beam_score(float x, float base, RowNormalizer norm) {
  return base + ((x - norm.max) - norm.log_total);
}

using NormalizeRowFn = RowNormalizer (*)(const float* x, size_t n);
// Index of the first entry of x[0..n) equal to its maximum (NaN ignored), n
// when there is none (n == 0 or every entry NaN).
using ArgmaxFn = size_t (*)(const float* x, size_t n);
// Index of the first v in [begin, n) with beam_score(x[v], base, norm) >
// threshold (NaN never is), or n.
using FirstAboveFn = size_t (*)(const float* x, size_t begin, size_t n, float base,
                                RowNormalizer norm, float threshold);

struct VocabRowKernels {
  NormalizeRowFn normalize = nullptr;
  ArgmaxFn argmax = nullptr;
  FirstAboveFn first_above = nullptr;
  const char* name = "";
  // Rough time of normalize + argmax over one entry, in picoseconds, for
  // deciding whether to split rows over threads (core/parallel.h); results
  // never depend on it. Portable ~2 ns (BM_LogSoftmax: 8000 entries in 16 µs
  // on the project's Zen 4 VM), AVX-512 ~0.3 ns, AVX2 ~0.6 ns.
  size_t picoseconds_per_entry = 2000;
};

// Whether log_sum_exp of x[0..n) (max + log_total of normalize_row) is
// finite, without computing it: exactly when no entry is NaN and the
// largest is finite (then the sum of exp is in [1, n]). For greedy search
// without scores, which needs only that: one pass of integer tests, four
// entries at a time in portable vectors, instead of exp over the row.
bool log_sum_exp_finite(const float* x, size_t n);

// The portable passes (every CPU; the reference of the others).
RowNormalizer normalize_row(const float* x, size_t n);
size_t argmax(const float* x, size_t n);
size_t first_above(const float* x, size_t begin, size_t n, float base, RowNormalizer norm,
                   float threshold);

// The fastest variant this CPU runs (core/cpu_features.h).
VocabRowKernels best_vocab_row_kernels();
// Every variant this CPU runs, fastest first (tests, benchmarks); returns how
// many were written (at most `capacity`).
size_t available_vocab_row_kernels(VocabRowKernels* out, size_t capacity);

#if defined(__x86_64__)
RowNormalizer normalize_row_avx512(const float* x, size_t n);
size_t argmax_avx512(const float* x, size_t n);
size_t first_above_avx512(const float* x, size_t begin, size_t n, float base, RowNormalizer norm,
                          float threshold);
RowNormalizer normalize_row_avx2(const float* x, size_t n);
size_t argmax_avx2(const float* x, size_t n);
size_t first_above_avx2(const float* x, size_t begin, size_t n, float base, RowNormalizer norm,
                        float threshold);
#endif

}  // namespace edgemt::kernels
