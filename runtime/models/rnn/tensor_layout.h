// Tensor layout: the tensors an RnnConfig implies, walked from the family's
// one table, schema/rnn_tensors.def (names, shapes, storage, conditions),
// which the converter parses too (tools/edgemt_tools/families/tensor_table.py). The
// verifier requires exactly these; the weight loader names them by id.
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/model.h"
#include "models/expected_tensor.h"
#include "models/tensor_table.h"
#include "models/rnn/config.h"

namespace edgemt::rnn {

// One id per line of schema/rnn_tensors.def.
enum class RnnTensor : uint8_t {
#define RNN_TENSOR(id, ...) id,
#include "rnn_tensors.def"
#undef RNN_TENSOR
};
EDGEMT_TENSOR_TABLE_FUNCTIONS(RnnTensor, RnnConfig);

}  // namespace edgemt::rnn
