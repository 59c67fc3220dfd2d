// Pass 1 of the arg-max shortcut (layers/argmax_shortcut.h) over n ids: each
// id's bound B from its constants and the row's factors, its upper bound
// A + B written over A, and the best lower bound max(A - B).
//   B[i] = (max_error[i]·f.error + l1[i]·f.l1 + abs_bias[i]·f.bias + |A[i]|·f.approx)
//          · widening      (left to right, each product and sum rounded)
// A banned id's A is NaN: its lanes never raise the maximum. Every variant
// computes the same A + B bits and the same maximum (a value: +0 and -0
// are equal wherever it is used); argmax_upper_bounds() runs the fastest
// this CPU has.
#pragma once

#include <cmath>
#include <cstddef>

namespace edgemt::kernels {

struct ArgmaxBoundFactors {
  float error = 0.0f;   // multiplies D[n] = max_error[n]
  float l1 = 0.0f;      // multiplies ‖w[n]‖₁
  float bias = 0.0f;    // multiplies |b[n]|
  float approx = 0.0f;  // multiplies |A[n]|
};

// One id's B, as every variant computes it.
inline float argmax_bound(float max_error, float l1, float abs_bias, const ArgmaxBoundFactors& f,
                          float widening, float a) {
  return (max_error * f.error + l1 * f.l1 + abs_bias * f.bias + std::fabs(a) * f.approx) * widening;
}

// approx [n] in/out: A in, A + B out. Returns max(A - B) over the ids
// (-inf when there are none, or all are NaN); *infinite: some |A| or B is
// infinite.
float argmax_upper_bounds(const float* max_error, const float* l1, const float* abs_bias,
                          const ArgmaxBoundFactors& f, float widening, size_t n, float* approx,
                          bool* infinite);
float argmax_upper_bounds_portable(const float* max_error, const float* l1, const float* abs_bias,
                                   const ArgmaxBoundFactors& f, float widening, size_t n,
                                   float* approx, bool* infinite);
#if defined(__x86_64__)
float argmax_upper_bounds_avx2(const float* max_error, const float* l1, const float* abs_bias,
                               const ArgmaxBoundFactors& f, float widening, size_t n,
                               float* approx, bool* infinite);
float argmax_upper_bounds_avx512(const float* max_error, const float* l1, const float* abs_bias,
                                 const ArgmaxBoundFactors& f, float widening, size_t n,
                                 float* approx, bool* infinite);
#endif

}  // namespace edgemt::kernels
