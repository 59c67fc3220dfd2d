// Tensor layout: the tensors a TransformerConfig implies, walked from the
// family's one table, schema/transformer_tensors.def (schema/TENSORS.md
// explains it; models/tensor_table.h walks it). The verifier requires
// exactly these, the test builder writes them, the weight loader names them
// by id, and the converter parses the same .def (model_spec.py).
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

// Named as tensor_table.h's table_tensor_name() says.
bool tensor_name(TransformerTensor tensor, uint32_t layer, char* out, size_t size);

// walk_tensor_table() over the family's table; not validated here (the
// verifier does that first). False if the visitor stopped early.
bool for_each_expected_tensor(const TransformerConfig& config, DType weight_dtype,
                              ExpectedTensorVisitor visit, void* context);

// Number of tensors `config` implies in a file of `weight_dtype`.
size_t expected_tensor_count(const TransformerConfig& config, DType weight_dtype = DType::kF32);

}  // namespace edgemt
