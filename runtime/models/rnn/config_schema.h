// The RNN family's config as the model file's RnnConfig table holds it
// (schema/edgemt.fbs), read and checked (the family's read_config calls it).
#pragma once

#include "edgemt/status.h"
#include "models/rnn/config.h"
#include "models/family_schema.h"
#include "schema/edgemt_generated.h"

namespace edgemt::rnn {

// Errors: kUnsupported (an enum value this runtime does not know),
// kInvalidModel (verify_rnn_config).
[[nodiscard]] Status read_config(const format::RnnConfig& in, RnnConfig* out);

}  // namespace edgemt::rnn
