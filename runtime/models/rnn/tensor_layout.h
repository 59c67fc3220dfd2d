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

// Named as tensor_table.h's table_tensor_name() says.
bool tensor_name(RnnTensor tensor, uint32_t layer, char* out, size_t size);

// walk_tensor_table() over the family's table. False if the visitor
// stopped early.
bool for_each_expected_tensor(const RnnConfig& config, DType weight_dtype,
                              ExpectedTensorVisitor visit, void* context);

}  // namespace edgemt
