#include "models/family_schema.h"

#include "models/transformer/config_schema.h"

namespace edgemt {
namespace {

// Version 1: the family enum and a TransformerConfig in `config`.
Status read_family_v1(const format::Model& root, FamilyConfig* out) {
  if (root.family() != format::ModelFamily::TransformerEncoderDecoder) {
    return Status::error(StatusCode::kUnsupported, "model family %d is not supported",
                         static_cast<int>(root.family()));
  }
  if (root.config() == nullptr) {
    return Status::error(StatusCode::kInvalidModel, "model has no config");
  }
  out->id = FamilyId::kTransformer;
  return read_transformer_config(*root.config(), &out->transformer);
}

// Version 2: the family_config union, whose type is the family. The fields
// of version 1 must be absent, so that no file says two things.
Status read_family_v2(const format::Model& root, FamilyConfig* out) {
  if (root.config() != nullptr ||
      root.family() != format::ModelFamily::TransformerEncoderDecoder) {
    return Status::error(StatusCode::kInvalidModel,
                         "a version-2 model holds its config in family_config, not in config/family");
  }
  switch (root.family_config_type()) {
    case format::FamilyConfig::NONE:
      return Status::error(StatusCode::kInvalidModel, "model has no family_config");
    case format::FamilyConfig::TransformerConfig: {
      const format::TransformerConfig* config = root.family_config_as_TransformerConfig();
      if (config == nullptr) {
        return Status::error(StatusCode::kInvalidModel, "model has no family_config");
      }
      out->id = FamilyId::kTransformer;
      return read_transformer_config(*config, &out->transformer);
    }
  }
  return Status::error(StatusCode::kUnsupported, "model family_config type %d is not supported",
                       static_cast<int>(root.family_config_type()));
}

}  // namespace

Status read_family_config(const format::Model& root, FamilyConfig* out) {
  return root.format_version() == 1 ? read_family_v1(root, out) : read_family_v2(root, out);
}

}  // namespace edgemt
