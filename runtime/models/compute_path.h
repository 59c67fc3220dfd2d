// The text EncoderDecoder::describe_compute_path() gives (`edgemt inspect`,
// `bench`): what runs a family's matrix products, the same words for every
// family.
#pragma once

#include <cstddef>

#include "edgemt/model.h"

namespace edgemt {

// `output`: one of the family's Linears (its kind is the model's: all are
// f32, f16 or int8 alike); `output_own_f32`: the output projection is on
// the own f32 GEMM (packed now or later); `f16_native`: f16 matrices on XNNPACK's f16
// GEMMs; `own_kernels`: what the family computes itself besides (e.g. "own
// RNN cell and attention kernels"; nullptr: nothing said).
class Linear;
void describe_linear_compute_path(const Model& model, const Linear& output, bool output_own_f32,
                                  bool f16_native, const char* own_kernels, char* out, size_t size);

}  // namespace edgemt
