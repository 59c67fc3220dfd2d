// Families: the one place that knows every model family (runtime/models/
// <family>/). The model verifier, Model and Translator reach a family only
// through these functions; adding a family adds one case to each switch in
// families.cc (see docs/ARCHITECTURE.md, "Add a model family").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "edgemt/model.h"
#include "edgemt/status.h"
#include "models/encoder_decoder.h"
#include "models/expected_tensor.h"
#include "models/transformer/config.h"

namespace edgemt {

enum class FamilyId : uint8_t {
  kTransformer = 0,
};

// A verified model's family and its config. Exactly the member of `id` is set.
struct FamilyConfig {
  FamilyId id = FamilyId::kTransformer;
  TransformerConfig transformer;
};

const char* family_name(FamilyId id);  // "transformer"

// Family-neutral facts every family's config holds.
uint32_t family_vocab_size(const FamilyConfig& config);
uint32_t family_max_sequence_length(const FamilyConfig& config);

// Every config value in range (kInvalidModel naming the field otherwise).
[[nodiscard]] Status verify_family_config(const FamilyConfig& config);

// Calls `visit` for every tensor the config implies (the family's
// tensor_layout); false if the visitor stopped early.
bool for_each_expected_tensor(const FamilyConfig& config, DType weight_dtype,
                              ExpectedTensorVisitor visit, void* context);

// The config as `edgemt inspect` prints it (indented lines).
void describe_family_config(const FamilyConfig& config, char* out, size_t size);

// A verified model's family config (format/model.cc).
const FamilyConfig& family_config(const Model& model);

// Load phase: the family's weights and operators for `model`.
// Errors: kUnsupported, kInvalidModel, kOutOfMemory, kBackendError.
[[nodiscard]] Status create_encoder_decoder(const Model& model, std::unique_ptr<EncoderDecoder>* out);

}  // namespace edgemt
