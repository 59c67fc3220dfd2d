// The Transformer's config as the model file's TransformerConfig table holds
// it (schema/edgemt.fbs), read and checked (models/family_schema.cc calls it).
#pragma once

#include "edgemt/status.h"
#include "models/transformer/config.h"
#include "models/family_schema.h"
#include "schema/edgemt_generated.h"

namespace edgemt::transformer {

// Errors: kUnsupported (activation, norm placement), kInvalidModel (a value
// out of range: verify_transformer_config).
[[nodiscard]] Status read_config(const format::TransformerConfig& in,
                                             TransformerConfig* out);

}  // namespace edgemt::transformer
