// Tensor layout: the tensors an RnnConfig implies, walked from the family's
// one table, schema/rnn_tensors.def (names, shapes, storage, conditions),
// which the converter parses too (tools/edgemt_tools/model_spec.py). The
// verifier requires exactly these; the weight loader names them by id.
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/model.h"
#include "models/expected_tensor.h"
#include "models/rnn/config.h"

namespace edgemt {

// One id per line of schema/rnn_tensors.def.
enum class RnnTensor : uint8_t {
#define RNN_TENSOR(id, group, name, kind, rows, cols, condition) id,
#include "rnn_tensors.def"
#undef RNN_TENSOR
};

// The name `tensor` has in a file ("encoder.layers.{layer}.<name>" for layer
// parts); for a LINEAR entry the prefix of its ".weight" and ".bias".
bool rnn_tensor_name(RnnTensor tensor, uint32_t layer, char* out, size_t size);

// Calls `visit` for every tensor `config` implies, in the table's order
// (model-wide tensors, every encoder layer, every decoder layer); in I8
// files every matrix `X` is followed by `X_scale` [rows] F32. False if the
// visitor stopped early.
bool for_each_expected_tensor(const RnnConfig& config, DType weight_dtype,
                              ExpectedTensorVisitor visit, void* context);

}  // namespace edgemt
