// Tensor layout: the tensors a TransformerConfig implies, walked from the
// family's one table, schema/transformer_tensors.def (schema/TENSORS.md
// explains it; models/tensor_table.h walks it). The verifier requires
// exactly these, the test builder writes them, the weight loader names them
// by id, and the converter parses the same .def
// (tools/edgemt_tools/families/tensor_table.py).
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/model.h"
#include "models/expected_tensor.h"
#include "models/tensor_table.h"
#include "models/transformer/config.h"

namespace edgemt::transformer {

// One id per line of schema/transformer_tensors.def.
enum class TransformerTensor : uint8_t {
#define TRANSFORMER_TENSOR(id, ...) id,
#include "transformer_tensors.def"
#undef TRANSFORMER_TENSOR
};
EDGEMT_TENSOR_TABLE_FUNCTIONS(TransformerTensor, TransformerConfig);

}  // namespace edgemt::transformer
