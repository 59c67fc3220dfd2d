// Reading a model file's family and config (schema/edgemt.fbs), for the
// verifier: format version 1 names the family in `family` and holds a
// TransformerConfig in `config`; version 2 holds a `family_config` union
// whose type is the family. Adding a family adds one case here.
#pragma once

#include "edgemt/status.h"
#include "models/families.h"
#include "schema/edgemt_generated.h"

namespace edgemt {

// Errors: kInvalidModel (missing or contradictory config), kUnsupported (an
// unknown family or enum value), and the family's config checks.
[[nodiscard]] Status read_family_config(const format::Model& root, FamilyConfig* out);

}  // namespace edgemt
