// Families: the registry of model families (runtime/models/<family>/). Each
// family describes itself with one `Family` record (function pointers, no
// constructor runs: constant-initialized); kFamilies in families.cc lists
// them, one line each. The verifier, Model and Translator reach a family
// only through the functions below (docs/ARCHITECTURE.md, "Add a model
// family").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>

#include "edgemt/model.h"
#include "edgemt/status.h"
#include "models/encoder_decoder.h"
#include "models/expected_tensor.h"
#include "models/network_options.h"
#include "schema/edgemt_generated.h"

namespace edgemt {

// A family is named by the member of the file's FamilyConfig union that
// holds its config (schema/edgemt.fbs; version-1 files: TransformerConfig),
// so that adding one adds no id here.
using FamilyId = format::FamilyConfig;

// Bytes a family's config may take (checked when it is stored).
inline constexpr size_t kMaxFamilyConfigBytes = 128;

// A verified model's family and its config. Family-neutral: the config is
// held as bytes that only the family's own code reads as its type
// (emplace<Config>() while reading the file, as<Config>() after), so that
// this header, the verifier (runtime/format/) and every caller outside a
// family include no family's header (tests/tools/test_layering.py).
// Trivially copyable.
struct FamilyConfig {
  FamilyId id = FamilyId::NONE;

  // A value-initialized Config in the bytes, to be filled in.
  template <typename Config>
  Config& emplace() {
    static_assert(sizeof(Config) <= kMaxFamilyConfigBytes && alignof(Config) <= alignof(double),
                  "raise kMaxFamilyConfigBytes");
    static_assert(std::is_trivially_copyable_v<Config>, "a family config is plain data");
    return *new (storage_) Config();
  }
  // The config emplace<Config>() stored (the caller knows `id`'s type).
  template <typename Config>
  const Config& as() const {
    return *std::launder(reinterpret_cast<const Config*>(storage_));
  }

 private:
  alignas(double) unsigned char storage_[kMaxFamilyConfigBytes] = {};
};


// What the runtime needs of one family.
struct Family {
  FamilyId id;
  const char* name;  // "transformer": its folder under runtime/models/
  // Reads and checks its member of the file's family_config union (root.
  // family_config_type() is `id`).
  Status (*read_config)(const format::Model& root, FamilyConfig* out);
  uint32_t (*vocab_size)(const FamilyConfig& config);         // target ids
  uint32_t (*source_vocab_size)(const FamilyConfig& config);  // source ids
  uint32_t (*max_sequence_length)(const FamilyConfig& config);
  bool (*for_each_expected_tensor)(const FamilyConfig& config, WeightTypes types,
                                   ExpectedTensorVisitor visit, void* context);
  void (*describe_config)(const FamilyConfig& config, char* out, size_t size);
  Status (*create)(const Model& model, const NetworkOptions& options,
                   std::unique_ptr<EncoderDecoder>* out);
  // Whether its per-row int8 files may keep their embedding tables in F32
  // or F16 (the header's f32_tables, format version 9, and f16_tables, 10),
  // or give their I8 tables residual codes (residual_tables, 11).
  bool int8_float_tables;
};

// The registered family of `id`; nullptr when there is none.
const Family* find_family(FamilyId id);

const char* family_name(FamilyId id);  // "transformer"

// Family-neutral facts every family's config holds.
uint32_t family_vocab_size(const FamilyConfig& config);
uint32_t family_source_vocab_size(const FamilyConfig& config);
uint32_t family_max_sequence_length(const FamilyConfig& config);

// Calls `visit` for every tensor the config implies (the family's
// tensor_layout); false if the visitor stopped early.
bool for_each_expected_tensor(const FamilyConfig& config, WeightTypes types,
                              ExpectedTensorVisitor visit, void* context);

// The config as `edgemt inspect` prints it (indented lines).
void describe_family_config(const FamilyConfig& config, char* out, size_t size);

// A verified model's family config (format/model.cc).
const FamilyConfig& family_config(const Model& model);

// Load phase: the family's weights and operators for `model`, as `options`
// ask (models/network_options.h).
// Errors: kUnsupported, kInvalidModel, kOutOfMemory, kBackendError.
[[nodiscard]] Status create_encoder_decoder(const Model& model, const NetworkOptions& options,
                                            std::unique_ptr<EncoderDecoder>* out);

}  // namespace edgemt
