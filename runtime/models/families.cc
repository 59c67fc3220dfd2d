#include "models/families.h"

#include "models/transformer/tensor_layout.h"
#include "models/transformer/transformer.h"

namespace edgemt {

const char* family_name(FamilyId id) {
  switch (id) {
    case FamilyId::kTransformer: return "transformer";
  }
  return "unknown";
}

uint32_t family_vocab_size(const FamilyConfig& config) {
  switch (config.id) {
    case FamilyId::kTransformer: return config.transformer.vocab_size;
  }
  return 0;
}

uint32_t family_max_sequence_length(const FamilyConfig& config) {
  switch (config.id) {
    case FamilyId::kTransformer: return config.transformer.max_positions;
  }
  return 0;
}

Status verify_family_config(const FamilyConfig& config) {
  switch (config.id) {
    case FamilyId::kTransformer: return verify_transformer_config(config.transformer);
  }
  return Status::error(StatusCode::kUnsupported, "model family %d is not supported",
                       static_cast<int>(config.id));
}

bool for_each_expected_tensor(const FamilyConfig& config, DType weight_dtype,
                              ExpectedTensorVisitor visit, void* context) {
  switch (config.id) {
    case FamilyId::kTransformer:
      return for_each_expected_tensor(config.transformer, weight_dtype, visit, context);
  }
  return false;
}

void describe_family_config(const FamilyConfig& config, char* out, size_t size) {
  if (out == nullptr || size == 0) return;
  out[0] = '\0';
  switch (config.id) {
    case FamilyId::kTransformer:
      describe_transformer_config(config.transformer, out, size);
      return;
  }
}

Status create_encoder_decoder(const Model& model, std::unique_ptr<EncoderDecoder>* out) {
  switch (family_config(model).id) {
    case FamilyId::kTransformer: return create_transformer(model, out);
  }
  return Status::error(StatusCode::kUnsupported, "model family %s has no runtime",
                       model.family());
}

const TransformerConfig& transformer_config(const Model& model) {
  return family_config(model).transformer;
}

}  // namespace edgemt
