#include "models/family_schema.h"

#include "models/transformer/config_schema.h"  // version 1 files hold a TransformerConfig

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
  out->id = FamilyId::TransformerConfig;
  return transformer::read_config(*root.config(), &out->emplace<transformer::TransformerConfig>());
}

// Version 2: the family_config union, whose type names the family (its
// registered record reads the member). The fields of version 1 must be
// absent, so that no file says two things.
Status read_family_v2(const format::Model& root, FamilyConfig* out) {
  if (root.config() != nullptr ||
      root.family() != format::ModelFamily::TransformerEncoderDecoder) {
    return Status::error(StatusCode::kInvalidModel,
                         "a version-2 model holds its config in family_config, not in config/family");
  }
  const FamilyId type = root.family_config_type();
  if (type == FamilyId::NONE || root.family_config() == nullptr) {
    return Status::error(StatusCode::kInvalidModel, "model has no family_config");
  }
  const Family* family = find_family(type);
  if (family == nullptr) {
    return Status::error(StatusCode::kUnsupported, "model family_config type %d is not supported",
                         static_cast<int>(type));
  }
  return family->read_config(root, out);
}

}  // namespace

Status read_family_config(const format::Model& root, FamilyConfig* out) {
  return root.format_version() == 1 ? read_family_v1(root, out) : read_family_v2(root, out);
}

}  // namespace edgemt
