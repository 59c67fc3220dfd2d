// Reading a model file's family and config (schema/edgemt.fbs), for the
// verifier: format version 1 names the family in `family` and holds a
// TransformerConfig in `config`; version 2 holds a `family_config` union
// whose type is the family, read by the family's registered record. Also
// the helpers every family's read_config (its config_schema.cc) uses.
#pragma once

#include "edgemt/status.h"
#include "models/families.h"
#include "schema/edgemt_generated.h"

namespace edgemt {

// Errors: kInvalidModel (missing or contradictory config), kUnsupported (an
// unknown family or enum value), and the family's config checks.
[[nodiscard]] Status read_family_config(const format::Model& root, FamilyConfig* out);

// A FlatBuffers enum value of the file as the runtime's enum of the same
// values; false when it is outside the generated type's [MIN, MAX] (a value
// this runtime does not know).
template <typename To, typename From>
[[nodiscard]] bool read_enum(From value, To* out) {
  const int v = static_cast<int>(value);
  if (v < static_cast<int>(From::MIN) || v > static_cast<int>(From::MAX)) return false;
  *out = static_cast<To>(v);
  return true;
}

}  // namespace edgemt

// Inside a family's read_config(in, out): copies the file table's scalar
// `field` to the runtime config's field of the same name.
#define EDGEMT_COPY_FIELD(field) out->field = in.field();
