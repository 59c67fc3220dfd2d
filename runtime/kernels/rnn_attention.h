// Global attention of the RNN family for one query over one sentence's n
// source positions (own kernel; the Transformer's is kernels/attention.h):
//
//   scores   dot form:       e_i = keys[i] · q         (Luong dot: keys are
//                                                       the encoder outputs;
//                                                       general: K h_i)
//            additive form:  e_i = v · tanh(q + keys[i])  (q already Q s + b,
//                                                       keys[i] = K h_i)
//   weights  a = softmax(e)  (max subtracted, then e^x / Σ)
//   context  c = Σ_i a_i · values[i]
//
// Shapes: q [H], keys and values [n, H] (row stride H), v [H]; out:
// weights [n], context [H]. Score sums run in 8 interleaved lanes combined
// in a fixed order, the context in index order, in float: the same bits on
// every CPU (PyTorch's BLAS sums in another order: results agree to
// rounding, not bits).
#pragma once

#include <cstddef>

namespace edgemt::kernels {

enum class RnnScoreForm : unsigned char { kDot, kAdditive };

void rnn_attend(RnnScoreForm form, const float* query, const float* keys, const float* values,
                const float* v, size_t n, size_t hidden, float* weights, float* context);

}  // namespace edgemt::kernels
