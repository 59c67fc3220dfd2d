// Tensor layout: the tensors a TransformerConfig implies, walked from the
// family's one table, schema/transformer_tensors.def (names, shapes,
// storage, conditions; schema/TENSORS.md explains them).
//
// The walk is what the verifier requires (every expected tensor in the file
// with exactly this shape and dtype, and nothing else) and what the test
// model builder writes; the weight loader (weights.cc) names what it reads
// through the same table's ids. The converter parses the same .def file
// (tools/edgemt_tools/model_spec.py), so both sides list the same tensors in
// the same order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/model.h"
#include "models/expected_tensor.h"
#include "models/transformer/config.h"

namespace edgemt {

// One id per line of schema/transformer_tensors.def.
enum class TransformerTensor : uint8_t {
#define TRANSFORMER_TENSOR(id, group, name, kind, rows, cols, condition) id,
#include "transformer_tensors.def"
#undef TRANSFORMER_TENSOR
};

// The name `tensor` has in a file: "<name>" for the model-wide ones,
// "encoder.layers.{layer}.<name>" / "decoder.layers.{layer}.<name>" for layer
// parts (`layer` ignored otherwise). For a LINEAR or NORM entry this is the
// prefix of its ".weight" and ".bias". False if it does not fit `size`.
bool transformer_tensor_name(TransformerTensor tensor, uint32_t layer, char* out, size_t size);

// Calls `visit` for every tensor `config` implies, in the table's order
// (model-wide tensors, then every encoder layer, encoder end, every decoder
// layer, decoder end). With weight_dtype I8 every matrix `X` is followed by
// `X_scale` [rows] F32. Returns false if the visitor stopped early, true
// otherwise. The config is not validated here (the verifier does that
// first); a zero-layer config simply yields no layer tensors.
bool for_each_expected_tensor(const TransformerConfig& config, DType weight_dtype,
                              ExpectedTensorVisitor visit, void* context);

// Number of tensors `config` implies in a file of `weight_dtype`.
size_t expected_tensor_count(const TransformerConfig& config, DType weight_dtype = DType::kF32);

}  // namespace edgemt
