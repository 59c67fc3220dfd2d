#include "models/families.h"

#include "models/rnn/rnn.h"
#include "models/transformer/transformer.h"

namespace edgemt {
namespace {

// Every family this runtime runs: one line each.
constexpr const Family* kFamilies[] = {
    &transformer::kFamily,
    &rnn::kFamily,
};

}  // namespace

const Family* find_family(FamilyId id) {
  for (const Family* family : kFamilies) {
    if (family->id == id) return family;
  }
  return nullptr;
}

const char* family_name(FamilyId id) {
  const Family* family = find_family(id);
  return family != nullptr ? family->name : "unknown";
}

uint32_t family_vocab_size(const FamilyConfig& config) {
  const Family* family = find_family(config.id);
  return family != nullptr ? family->vocab_size(config) : 0;
}

uint32_t family_source_vocab_size(const FamilyConfig& config) {
  const Family* family = find_family(config.id);
  return family != nullptr ? family->source_vocab_size(config) : 0;
}

uint32_t family_max_sequence_length(const FamilyConfig& config) {
  const Family* family = find_family(config.id);
  return family != nullptr ? family->max_sequence_length(config) : 0;
}

bool for_each_expected_tensor(const FamilyConfig& config, WeightTypes types,
                              ExpectedTensorVisitor visit, void* context) {
  const Family* family = find_family(config.id);
  return family != nullptr && family->for_each_expected_tensor(config, types, visit, context);
}

void describe_family_config(const FamilyConfig& config, char* out, size_t size) {
  if (out == nullptr || size == 0) return;
  out[0] = '\0';
  const Family* family = find_family(config.id);
  if (family != nullptr) family->describe_config(config, out, size);
}

Status create_encoder_decoder(const Model& model, const NetworkOptions& options,
                              std::unique_ptr<EncoderDecoder>* out) {
  const Family* family = find_family(family_config(model).id);
  if (family == nullptr) {
    return Status::error(StatusCode::kUnsupported, "model family %s has no runtime", model.family());
  }
  return family->create(model, options, out);
}

}  // namespace edgemt
