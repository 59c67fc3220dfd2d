// Tensor layout: the tensors a TransformerConfig implies (schema/TENSORS.md).
//
// One definition, used by the verifier (every expected tensor must be in the
// file with exactly this shape and dtype, and nothing else), by the weight
// loader of the Translator (which finds its weights by these names) and by the
// test model builder. The converter's twin is tools/edgemt_tools/model_spec.py
// (`expected_tensors`); both must list the same names in the same order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/model.h"
#include "models/expected_tensor.h"
#include "models/transformer/config.h"

namespace edgemt {

// Calls `visit` for every tensor `config` implies, in a stable order
// (embeddings, position table, output, encoder layers, encoder final norm,
// decoder layers, decoder final norm; the order of model_spec.py). With
// weight_dtype I8 every matrix `X` is followed by `X_scale` [rows] F32. Returns
// false if the visitor stopped early, true otherwise. The config is not
// validated here (the verifier does that first); a zero-layer config simply
// yields no layer tensors.
bool for_each_expected_tensor(const TransformerConfig& config, DType weight_dtype,
                              ExpectedTensorVisitor visit, void* context);

// Number of tensors `config` implies in a file of `weight_dtype`.
size_t expected_tensor_count(const TransformerConfig& config, DType weight_dtype = DType::kF32);

}  // namespace edgemt
