// Numerically stable softmax over one row, in place (max subtracted first).
// Entries equal to -infinity get probability 0; a row of only -infinity is
// left as all zeros rather than NaN.
#pragma once

#include <cstddef>

namespace edgemt::kernels {

void softmax(float* x, size_t n);

// log_softmax over one row: x[i] - max - log(sum(exp(x - max))). In place.
// Returns the normalizer max + log(sum(exp(x - max))) (= log_sum_exp(x)):
// finite exactly when the row has no NaN or +inf and at least one finite
// entry, which is how the search tells a usable row from an overflowed one.
float log_softmax(float* x, size_t n);

// log(sum(exp(x))) = max + log(sum(exp(x - max))), the normalizer of
// log_softmax computed exactly as log_softmax computes it, without writing x
// (greedy search scores its arg-max with it). -inf for an all -inf row;
// NaN or +inf when the row holds a NaN or +inf (never finite then).
float log_sum_exp(const float* x, size_t n);

}  // namespace edgemt::kernels
