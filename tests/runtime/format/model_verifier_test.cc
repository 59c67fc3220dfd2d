// The verifier, one check at a time, on exact-size heap copies of files built
// by ModelBuilder (so AddressSanitizer/valgrind see any read past the end),
// plus corruption sweeps that must never crash.
#include "format/model_verifier.h"
#include "format/crc32.h"
#include "models/transformer/config.h"
#include "models/transformer/tensor_layout.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "support/model_builder.h"

using namespace edgemt::transformer;  // the family under test

namespace edgemt {
namespace {

using testing::BuiltLayout;
using testing::ModelBuilder;

bool contains(const Status& status, const std::string& text) {
  return std::strstr(status.message(), text.c_str()) != nullptr;
}

// Verifies an exact-size heap copy of `bytes` (the view dies with the copy:
// callers only look at the status).
Status verify(const std::vector<uint8_t>& bytes) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size() > 0 ? bytes.size() : 1]);
  if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
  VerifiedModel model;
  return verify_model(copy.get(), bytes.size(), &model);
}

Status verify(const ModelBuilder& builder) { return verify(builder.build()); }

#define CHECK_STATUS(status, expected_code, text)                                   \
  do {                                                                              \
    const ::edgemt::Status status_ = (status);                                      \
    CHECK_MESSAGE(status_.code() == (expected_code), std::string(status_.message()));            \
    CHECK_MESSAGE(contains(status_, text), "message: ", std::string(status_.message()));         \
  } while (0)

TEST_CASE("format/model_verifier: the builder's files pass, f32 and f16, with trailing bytes") {
  ModelBuilder f32;
  Status status = verify(f32);
  CHECK_MESSAGE(status.is_ok(), std::string(status.message()));
  ModelBuilder f16(testing::tiny_config(), DType::kF16);
  status = verify(f16);
  CHECK_MESSAGE(status.is_ok(), std::string(status.message()));
  f32.trailing_bytes = 100;  // padding after the segment is allowed
  status = verify(f32);
  CHECK_MESSAGE(status.is_ok(), std::string(status.message()));
}

TEST_CASE("format/model_verifier: too small, truncated and oversized size prefixes") {
  for (size_t size = 0; size < 12; ++size) {
    CAPTURE(size);
    CHECK_STATUS(verify(std::vector<uint8_t>(size, 0)), StatusCode::kInvalidModel, "too small");
  }
  ModelBuilder builder;
  BuiltLayout layout;
  std::vector<uint8_t> bytes = builder.build(&layout);
  // Size prefix below the minimum, and beyond the file.
  bytes[0] = 4;
  bytes[1] = bytes[2] = bytes[3] = 0;
  CHECK_STATUS(verify(bytes), StatusCode::kInvalidModel, "too small");
  bytes[0] = bytes[1] = bytes[2] = 0xff;
  bytes[3] = 0x00;  // 16 MiB
  CHECK_STATUS(verify(bytes), StatusCode::kInvalidModel, "truncated");
  bytes[3] = 0xff;  // 4 GiB: over the FlatBuffers limit
  CHECK_STATUS(verify(bytes), StatusCode::kInvalidModel, "too large");
}

TEST_CASE("format/model_verifier: a cut inside the weight segment names the segment") {
  ModelBuilder builder;
  BuiltLayout layout;
  std::vector<uint8_t> bytes = builder.build(&layout);
  bytes.resize(bytes.size() - 64);
  CHECK_STATUS(verify(bytes), StatusCode::kInvalidModel, "weight segment");
  // weights_size larger than what follows the FlatBuffer.
  builder.weights_size = layout.weights_size + 64;
  CHECK_STATUS(verify(builder), StatusCode::kInvalidModel, "truncated");
}

TEST_CASE("format/model_verifier: wrong identifier") {
  ModelBuilder builder;
  builder.identifier = "ONNX";
  CHECK_STATUS(verify(builder), StatusCode::kInvalidModel,
               "not an edgemt model file: identifier is 'ONNX', expected 'EMT1'");
  // Non-printable identifier bytes are shown as '?'.
  std::vector<uint8_t> bytes = ModelBuilder().build();
  bytes[8] = 0;
  bytes[9] = 0xff;
  CHECK_STATUS(verify(bytes), StatusCode::kInvalidModel, "identifier is '??T1'");
  // Some other file: named as such even though its "size prefix" is absurd.
  const std::string text = "garbage!garbage!garbage!";
  CHECK_STATUS(verify(std::vector<uint8_t>(text.begin(), text.end())), StatusCode::kInvalidModel,
               "not an edgemt model file: identifier is 'garb'");
}

TEST_CASE("format/model_verifier: unsupported versions 0 and past kFormatVersion") {
  for (uint32_t version : {0u, kFormatVersion + 1, 100u}) {
    CAPTURE(version);
    ModelBuilder builder;
    builder.format_version = version;
    CHECK_STATUS(verify(builder), StatusCode::kUnsupportedVersion,
                 "model format version " + std::to_string(version) +
                     " is not supported (this runtime reads versions 1 to " +
                     std::to_string(kFormatVersion) + ")");
  }
}

TEST_CASE("format/model_verifier: version 1 (config in `config`) and 2 (the family_config union)") {
  for (uint32_t version : {1u, 2u}) {
    CAPTURE(version);
    ModelBuilder builder;
    builder.format_version = version;
    VerifiedModel model;
    const std::vector<uint8_t> bytes = builder.build();
    REQUIRE(verify_model(bytes.data(), bytes.size(), &model).is_ok());
    CHECK(model.format_version == version);
    CHECK(model.family.id == FamilyId::TransformerConfig);
    CHECK(model.family.as<TransformerConfig>().d_model == builder.config.d_model);
    CHECK(model.family.as<TransformerConfig>().max_positions == builder.config.max_positions);
  }
  ModelBuilder both;  // version 2 that also fills version 1's fields
  both.legacy_fields = true;
  CHECK_STATUS(verify(both), StatusCode::kInvalidModel,
               "a version-2 model holds its config in family_config, not in config/family");
  ModelBuilder none;
  none.include_config = false;
  CHECK_STATUS(verify(none), StatusCode::kInvalidModel, "model has no family_config");
  ModelBuilder v1_none;
  v1_none.format_version = 1;
  v1_none.include_config = false;
  CHECK_STATUS(verify(v1_none), StatusCode::kInvalidModel, "model has no config");
}

TEST_CASE("format/model_verifier: flipped bytes in the FlatBuffer never crash") {
  // Every byte of the FlatBuffer part, three corruption patterns each. A
  // flip may hit bytes the runtime does not care about (padding, a provenance
  // string, a float's low bits), so success is allowed; a crash, hang or
  // sanitizer report is not. Codes must be load errors.
  ModelBuilder builder;
  BuiltLayout layout;
  const std::vector<uint8_t> bytes = builder.build(&layout);
  const size_t fb_end = 4 + layout.flatbuffer_size;
  size_t accepted = 0;
  size_t rejected = 0;
  for (size_t position = 0; position < fb_end; ++position) {
    for (uint8_t pattern : {uint8_t{0xff}, uint8_t{0x01}, uint8_t{0x80}}) {
      std::vector<uint8_t> corrupt = bytes;
      corrupt[position] ^= pattern;
      const Status status = verify(corrupt);
      if (status.is_ok()) {
        ++accepted;
        continue;
      }
      ++rejected;
      const StatusCode code = status.code();
      const bool load_error = code == StatusCode::kInvalidModel ||
                              code == StatusCode::kUnsupportedVersion ||
                              code == StatusCode::kUnsupported;
      if (!load_error) {
        CAPTURE(position);
        CHECK_MESSAGE(load_error, std::string(status.message()));
      }
      if (status.message()[0] == '\0') {
        CAPTURE(position);
        CHECK_MESSAGE(false, "empty error message");
      }
    }
  }
  MESSAGE("corrupt FlatBuffers: " << rejected << " rejected, " << accepted << " accepted");
  CHECK(rejected > accepted);
}

TEST_CASE("format/model_verifier: random multi-byte corruption and random cuts never crash") {
  ModelBuilder builder(testing::tiny_config(), DType::kF16);
  BuiltLayout layout;
  const std::vector<uint8_t> bytes = builder.build(&layout);
  const size_t fb_end = 4 + layout.flatbuffer_size;
  uint64_t state = 12345;
  auto next = [&]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>(state >> 33);
  };
  size_t rejected = 0, cut = 0, cut_rejected = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> corrupt = bytes;
    if (round % 4 == 0) {
      // Any cut of an intact file loses bytes the FlatBuffer or the weight
      // segment declares: always refused.
      corrupt.resize(next() % corrupt.size());
      ++cut;
      cut_rejected += !verify(corrupt).is_ok();
      continue;
    }
    const size_t flips = 1 + next() % 8;
    for (size_t i = 0; i < flips; ++i) {
      corrupt[next() % fb_end] = static_cast<uint8_t>(next());
    }
    rejected += !verify(corrupt).is_ok();
  }
  MESSAGE(rejected << " of " << 3000 - cut << " byte-flipped files rejected (the rest verified)");
  CHECK(cut_rejected == cut);
}

TEST_CASE("format/model_verifier: tensor shape disagreeing with the config names both shapes") {
  ModelBuilder builder;
  CHECK(builder.reshape("encoder.layers.0.ffn.in.weight", {16, 7}));
  CHECK_STATUS(verify(builder), StatusCode::kInvalidModel,
               "tensor 'encoder.layers.0.ffn.in.weight' has shape [16, 7], config implies [16, 8]");
  ModelBuilder rank;
  CHECK(rank.reshape("decoder.layers.0.ffn_norm.bias", {8, 1}));
  CHECK_STATUS(verify(rank), StatusCode::kInvalidModel,
               "tensor 'decoder.layers.0.ffn_norm.bias' has shape [8, 1], config implies [8]");
  ModelBuilder positions;
  CHECK(positions.reshape("position.table", {15, 8}));
  CHECK_STATUS(verify(positions), StatusCode::kInvalidModel,
               "tensor 'position.table' has shape [15, 8], config implies [16, 8]");
}

TEST_CASE("format/model_verifier: missing tensor") {
  ModelBuilder builder;
  CHECK(builder.remove_tensor("decoder.layers.0.cross_attn.kv.bias"));
  CHECK_STATUS(verify(builder), StatusCode::kInvalidModel,
               "model has no tensor 'decoder.layers.0.cross_attn.kv.bias'");
  ModelBuilder optional;
  optional.config.output_bias = true;  // the flag without the tensor
  CHECK_STATUS(verify(optional), StatusCode::kInvalidModel, "model has no tensor 'output.bias'");
}

TEST_CASE("format/model_verifier: misaligned and out-of-range offsets") {
  const std::string name = "encoder.layers.0.self_attn.out.weight";
  ModelBuilder misaligned;
  misaligned.find(name)->offset = 32;
  CHECK_STATUS(verify(misaligned), StatusCode::kInvalidModel,
               "tensor '" + name + "' offset 32 is not a multiple of 64");

  ModelBuilder beyond;
  BuiltLayout layout;
  beyond.build(&layout);
  beyond.find(name)->offset = layout.weights_size;  // starts at the end, 256 bytes long
  CHECK_STATUS(verify(beyond), StatusCode::kInvalidModel,
               "tensor '" + name + "' (offset " + std::to_string(layout.weights_size) +
                   ", 256 bytes) lies outside the weight segment");

  ModelBuilder overflow;  // offset + size wraps around 2^64
  overflow.find(name)->offset = std::numeric_limits<uint64_t>::max() - 63;
  CHECK_STATUS(verify(overflow), StatusCode::kInvalidModel, "lies outside the weight segment");
}

TEST_CASE("format/model_verifier: size field disagreeing with shape and dtype") {
  ModelBuilder builder;
  builder.find("output.weight")->size = 32 * 8 * 4 - 4;
  CHECK_STATUS(verify(builder), StatusCode::kInvalidModel,
               "tensor 'output.weight' has 1020 bytes, but shape [32, 8] of f32 needs 1024");
  // A shape whose element count overflows 64 bits.
  ModelBuilder huge;
  huge.find("output.weight")->shape = {0xffffffffu, 0xffffffffu, 0xffffffffu};
  CHECK_STATUS(verify(huge), StatusCode::kInvalidModel, "needs more than");
}

TEST_CASE("format/model_verifier: duplicate, unsorted and unexpected tensors") {
  ModelBuilder duplicate;
  duplicate.add_tensor("encoder.layers.0.ffn.in.bias", {16}, DType::kF32);
  CHECK_STATUS(verify(duplicate), StatusCode::kInvalidModel,
               "duplicate tensor 'encoder.layers.0.ffn.in.bias'");

  ModelBuilder unsorted;
  unsorted.sort_tensors = false;  // layout order: embedding.source, embedding.target, position...
  CHECK_STATUS(verify(unsorted), StatusCode::kInvalidModel, "not sorted by name");

  ModelBuilder extra;
  extra.add_tensor("encoder.layers.1.ffn.in.bias", {16}, DType::kF32);
  CHECK_STATUS(verify(extra), StatusCode::kInvalidModel,
               "unexpected tensor 'encoder.layers.1.ffn.in.bias'");
}

TEST_CASE("format/model_verifier: tensor dtypes: matrices in the weight dtype, vectors f32") {
  ModelBuilder bias_f16;
  CHECK(bias_f16.set_dtype("encoder.layers.0.ffn.out.bias", DType::kF16));
  CHECK_STATUS(verify(bias_f16), StatusCode::kInvalidModel,
               "tensor 'encoder.layers.0.ffn.out.bias' has dtype f16, expected f32");

  ModelBuilder matrix_f32(testing::tiny_config(), DType::kF16);
  CHECK(matrix_f32.set_dtype("decoder.layers.0.self_attn.qkv.weight", DType::kF32));
  CHECK_STATUS(verify(matrix_f32), StatusCode::kInvalidModel,
               "tensor 'decoder.layers.0.self_attn.qkv.weight' has dtype f32, expected f16");

  ModelBuilder unknown;
  unknown.find("position.table")->raw_dtype = 9;
  CHECK_STATUS(verify(unknown), StatusCode::kInvalidModel,
               "tensor 'position.table' has unknown dtype 9");
}

TEST_CASE("format/model_verifier: tensor rank must be 1 to 4") {
  ModelBuilder scalar;
  scalar.find("output.weight")->shape = {};
  CHECK_STATUS(verify(scalar), StatusCode::kInvalidModel,
               "tensor 'output.weight' has rank 0 (ranks 1 to 4 are supported)");
  ModelBuilder five;
  five.find("output.weight")->shape = {1, 1, 32, 8, 1};
  CHECK_STATUS(verify(five), StatusCode::kInvalidModel, "has rank 5");
}

TEST_CASE("format/model_verifier: aliases promised by the config must share bytes") {
  TransformerConfig config = testing::tiny_config();
  config.shared_embeddings = true;
  ModelBuilder builder(config);
  // Give embedding.target its own bytes although the config says shared.
  testing::BuilderTensor* target = builder.find("embedding.target");
  target->alias_of.clear();
  target->values = builder.values("embedding.source");
  CHECK_STATUS(verify(builder), StatusCode::kInvalidModel,
               "tensor 'embedding.target' must share its bytes with 'embedding.source'");
}

TEST_CASE("format/model_verifier: special token ids must be inside the vocabulary") {
  struct Case {
    const char* name;
    int32_t SpecialTokens::*field;
    int32_t value;
  };
  const Case cases[] = {{"pad", &SpecialTokens::pad, -1},
                        {"unk", &SpecialTokens::unk, 32},
                        {"bos", &SpecialTokens::bos, 1000},
                        {"eos", &SpecialTokens::eos, 32},
                        {"decoder_start", &SpecialTokens::decoder_start, -7}};
  for (const Case& c : cases) {
    CAPTURE(c.name);
    ModelBuilder builder;
    builder.special_tokens.*c.field = c.value;
    CHECK_STATUS(verify(builder), StatusCode::kInvalidModel,
                 std::string("special token ") + c.name + " = " + std::to_string(c.value) +
                     " is outside the vocabulary [0, 32)");
  }
  ModelBuilder edge;
  edge.special_tokens.eos = 31;  // the last id is fine
  CHECK(verify(edge).is_ok());
}

TEST_CASE("format/model_verifier: config values out of range") {
  ModelBuilder heads;
  heads.config.heads = 3;
  CHECK_STATUS(verify(heads), StatusCode::kInvalidModel,
               "config.heads = 3 does not divide d_model = 8");

  struct Case {
    const char* text;
    void (*edit)(TransformerConfig*);
  };
  const Case cases[] = {
      {"config.encoder_layers = 0 is out of range", [](TransformerConfig* c) { c->encoder_layers = 0; }},
      {"config.decoder_layers = 129 is out of range", [](TransformerConfig* c) { c->decoder_layers = 129; }},
      {"config.d_model = 0 is out of range", [](TransformerConfig* c) { c->d_model = 0; }},
      {"config.d_model = 16392 is out of range", [](TransformerConfig* c) { c->d_model = 16392; }},
      {"config.heads = 0 is out of range", [](TransformerConfig* c) { c->heads = 0; }},
      {"config.heads = 16 is out of range (1 to 8)", [](TransformerConfig* c) { c->heads = 16; }},
      {"config.ffn_dim = 0 is out of range", [](TransformerConfig* c) { c->ffn_dim = 0; }},
      {"config.vocab_size = 16777217 is out of range", [](TransformerConfig* c) { c->vocab_size = (1u << 24) + 1; }},
      {"config.max_positions = 0 is out of range", [](TransformerConfig* c) { c->max_positions = 0; }},
      {"config.max_positions = 65537 is out of range", [](TransformerConfig* c) { c->max_positions = 65537; }},
      {"config.layer_norm_eps = 0 must be finite and greater than 0", [](TransformerConfig* c) { c->layer_norm_eps = 0.0f; }},
      {"config.layer_norm_eps = -1e-05 must be", [](TransformerConfig* c) { c->layer_norm_eps = -1e-5f; }},
      {"config.layer_norm_eps = nan must be", [](TransformerConfig* c) { c->layer_norm_eps = std::nanf(""); }},
      {"config.embedding_scale = inf is not finite", [](TransformerConfig* c) { c->embedding_scale = HUGE_VALF; }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    ModelBuilder builder;
    c.edit(&builder.config);  // tensors left as generated: the config check comes first
    CHECK_STATUS(verify(builder), StatusCode::kInvalidModel, c.text);
    TransformerConfig config = testing::tiny_config();
    c.edit(&config);
    CHECK(verify_transformer_config(config).code() == StatusCode::kInvalidModel);
  }
  CHECK(verify_transformer_config(testing::tiny_config()).is_ok());
}

TEST_CASE("format/model_verifier: int8 files (Int8PerRowDynamic) and their row scales") {
  TransformerConfig tied = testing::tiny_config();
  tied.shared_embeddings = tied.tied_output = true;
  for (const TransformerConfig& config : {testing::tiny_config(), tied}) {
    ModelBuilder int8(config, DType::kI8);
    VerifiedModel model;
    const std::vector<uint8_t> bytes = int8.build();
    REQUIRE(verify_model(bytes.data(), bytes.size(), &model).is_ok());
    CHECK(model.weight_dtype == DType::kI8);
    CHECK(model.quantization == QuantizationScheme::kInt8PerRowDynamic);
    CHECK(model.tensor_count == expected_tensor_count(config, DType::kI8));
  }
  ModelBuilder f32;
  {
    VerifiedModel model;
    const std::vector<uint8_t> bytes = f32.build();
    REQUIRE(verify_model(bytes.data(), bytes.size(), &model).is_ok());
    CHECK(model.quantization == QuantizationScheme::kNone);
  }

  ModelBuilder no_scheme(testing::tiny_config(), DType::kI8);
  no_scheme.raw_quantization = 0;
  CHECK_STATUS(verify(no_scheme), StatusCode::kInvalidModel,
               "quantization scheme none does not fit weight dtype i8 (expected int8-per-row-dynamic)");
  f32.raw_quantization = 1;
  CHECK_STATUS(verify(f32), StatusCode::kInvalidModel,
               "quantization scheme int8-per-row-dynamic does not fit weight dtype f32");
  ModelBuilder unknown(testing::tiny_config(), DType::kI8);
  unknown.raw_quantization = 9;
  CHECK_STATUS(verify(unknown), StatusCode::kUnsupported, "quantization scheme 9 is not supported");

  ModelBuilder missing(testing::tiny_config(), DType::kI8);
  REQUIRE(missing.remove_tensor("encoder.layers.0.ffn.in.weight_scale"));
  CHECK_STATUS(verify(missing), StatusCode::kInvalidModel,
               "model has no tensor 'encoder.layers.0.ffn.in.weight_scale'");
  ModelBuilder wrong_shape(testing::tiny_config(), DType::kI8);
  REQUIRE(wrong_shape.reshape("output.weight_scale", {31}));
  CHECK_STATUS(verify(wrong_shape), StatusCode::kInvalidModel,
               "tensor 'output.weight_scale' has shape [31], config implies [32]");
  ModelBuilder f32_matrix(testing::tiny_config(), DType::kI8);
  REQUIRE(f32_matrix.set_dtype("decoder.layers.0.cross_attn.q.weight", DType::kF32));
  CHECK_STATUS(verify(f32_matrix), StatusCode::kInvalidModel,
               "tensor 'decoder.layers.0.cross_attn.q.weight' has dtype f32, expected i8");
  for (float bad : {-0.5f, NAN, INFINITY}) {
    ModelBuilder scale(testing::tiny_config(), DType::kI8);
    scale.find("decoder.layers.0.self_attn.out.weight_scale")->values[3] = bad;
    CAPTURE(bad);
    CHECK_STATUS(verify(scale), StatusCode::kInvalidModel,
                 "tensor 'decoder.layers.0.self_attn.out.weight_scale' holds");
    CHECK_STATUS(verify(scale), StatusCode::kInvalidModel,
                 bad < 0.0f ? "a negative value at [3]: int8 row scales must be >= 0"
                            : "at [3]: weights must be finite");
  }
  // A tied output's scales are the embedding's, byte for byte.
  ModelBuilder untied_scale(tied, DType::kI8);
  testing::BuilderTensor* alias = untied_scale.find("output.weight_scale");
  REQUIRE(alias != nullptr);
  alias->alias_of.clear();
  alias->values = untied_scale.values("embedding.target_scale");
  CHECK_STATUS(verify(untied_scale), StatusCode::kInvalidModel,
               "tensor 'output.weight_scale' must share its bytes with 'embedding.target_scale'");
}

// A scheme's file (`good`, scheme value `raw`) is refused a format version
// before `first`, and the scheme in an f32 file.
void check_scheme_gates(const ModelBuilder& good, int8_t raw, const std::string& name,
                        uint32_t first) {
  ModelBuilder older = good;
  older.format_version = first - 1;
  CHECK_STATUS(verify(older), StatusCode::kInvalidModel,
               "quantization scheme " + name + " needs format version " + std::to_string(first) +
                   " or later");
  ModelBuilder f32;
  f32.raw_quantization = raw;
  CHECK_STATUS(verify(f32), StatusCode::kInvalidModel,
               "quantization scheme " + name + " does not fit weight dtype f32");
}

// An int8 builder file of a Marian scheme (`per_tensor` or `fixed_range`
// set by `choose`), checked to verify as `scheme`.
template <typename Choose>
ModelBuilder verified_scheme_builder(Choose choose, QuantizationScheme scheme) {
  ModelBuilder builder(testing::tiny_config(), DType::kI8);
  choose(&builder);
  builder.regenerate_tensors();
  VerifiedModel model;
  const std::vector<uint8_t> bytes = builder.build();
  REQUIRE(verify_model(bytes.data(), bytes.size(), &model).is_ok());
  CHECK(model.quantization == scheme);
  return builder;
}

// A smoothed int8 builder file (Int8SmoothedPerRowDynamic, format version 5).
ModelBuilder smoothed_builder(const TransformerConfig& config = testing::tiny_config()) {
  ModelBuilder builder(config, DType::kI8);
  builder.smoothed = true;
  builder.regenerate_tensors();
  return builder;
}

TEST_CASE("format/model_verifier: smoothed int8 files: a smoothing vector per projection, > 0") {
  ModelBuilder good = smoothed_builder();
  VerifiedModel model;
  const std::vector<uint8_t> bytes = good.build();
  REQUIRE(verify_model(bytes.data(), bytes.size(), &model).is_ok());
  CHECK(model.quantization == QuantizationScheme::kInt8SmoothedPerRowDynamic);
  // Every LINEAR's weight and an untied output projection have one; the
  // embedding tables (and a tied output, an alias) none.
  CHECK(good.find("encoder.layers.0.self_attn.qkv.weight_smooth") != nullptr);
  CHECK(good.find("decoder.layers.0.cross_attn.kv.weight_smooth") != nullptr);
  CHECK(good.find("embedding.source_smooth") == nullptr);
  TransformerConfig untied = testing::tiny_config();
  untied.tied_output = false;
  CHECK(smoothed_builder(untied).find("output.weight_smooth") != nullptr);
  TransformerConfig tied = testing::tiny_config();
  tied.tied_output = true;
  CHECK(smoothed_builder(tied).find("output.weight_smooth") == nullptr);

  ModelBuilder missing = smoothed_builder();
  REQUIRE(missing.remove_tensor("decoder.layers.0.ffn.out.weight_smooth"));
  CHECK_STATUS(verify(missing), StatusCode::kInvalidModel,
               "model has no tensor 'decoder.layers.0.ffn.out.weight_smooth'");
  ModelBuilder wrong_shape = smoothed_builder();
  REQUIRE(wrong_shape.reshape("decoder.layers.0.ffn.out.weight_smooth", {8}));
  CHECK_STATUS(verify(wrong_shape), StatusCode::kInvalidModel,
               "tensor 'decoder.layers.0.ffn.out.weight_smooth' has shape [8], config implies [16]");
  ModelBuilder on_embedding = smoothed_builder();
  on_embedding.add_tensor("embedding.source_smooth", {8}, DType::kF32);
  CHECK_STATUS(verify(on_embedding), StatusCode::kInvalidModel,
               "unexpected tensor 'embedding.source_smooth'");
  for (float bad : {0.0f, -0.5f, NAN, INFINITY}) {
    ModelBuilder value = smoothed_builder();
    value.find("encoder.layers.0.ffn.in.weight_smooth")->values[2] = bad;
    CAPTURE(bad);
    CHECK_STATUS(verify(value), StatusCode::kInvalidModel,
                 "tensor 'encoder.layers.0.ffn.in.weight_smooth' holds");
    CHECK_STATUS(verify(value), StatusCode::kInvalidModel,
                 std::isfinite(bad) ? "at [2]: int8 smoothing vectors must be > 0"
                                    : "at [2]: weights must be finite");
  }
  // The vectors make no sense without the scheme, nor the scheme before
  // version 5 or outside int8.
  ModelBuilder unsmoothed_scheme = smoothed_builder();
  unsmoothed_scheme.raw_quantization = 1;
  CHECK_STATUS(verify(unsmoothed_scheme), StatusCode::kInvalidModel,
               "unexpected tensor 'decoder.layers.0.cross_attn.kv.weight_smooth'");
  check_scheme_gates(smoothed_builder(), 2, "int8-smoothed-per-row-dynamic", 5);
}

TEST_CASE("format/model_verifier: per-tensor int8 files: F32 tables, I8 projections, version 7") {
  ModelBuilder good = verified_scheme_builder([](ModelBuilder* b) { b->per_tensor = true; },
                                              QuantizationScheme::kInt8PerTensorDynamic);
  CHECK(good.find("embedding.source")->dtype == DType::kF32);
  CHECK(good.find("embedding.source_scale") == nullptr);
  CHECK(good.find("encoder.layers.0.ffn.in.weight")->dtype == DType::kI8);
  CHECK(good.find("encoder.layers.0.ffn.in.weight_scale") != nullptr);
  // An I8 table, or the scales of one, belong to the other schemes.
  ModelBuilder i8_table(testing::tiny_config(), DType::kI8);
  i8_table.raw_quantization = 3;
  CHECK_STATUS(verify(i8_table), StatusCode::kInvalidModel, "'embedding.source'");
  check_scheme_gates(good, 3, "int8-per-tensor-dynamic", 7);
}

TEST_CASE("format/model_verifier: static int8 files: an input scale per projection, > 0, version 8") {
  ModelBuilder good = verified_scheme_builder([](ModelBuilder* b) { b->fixed_range = true; },
                                              QuantizationScheme::kInt8PerTensorStatic);
  CHECK(good.find("embedding.source")->dtype == DType::kF32);
  CHECK(good.find("encoder.layers.0.self_attn.qkv.weight_input_scale") != nullptr);
  CHECK(good.find("embedding.source_input_scale") == nullptr);
  ModelBuilder missing = good;
  REQUIRE(missing.remove_tensor("decoder.layers.0.ffn.out.weight_input_scale"));
  CHECK_STATUS(verify(missing), StatusCode::kInvalidModel,
               "model has no tensor 'decoder.layers.0.ffn.out.weight_input_scale'");
  for (float bad : {0.0f, -1.0f, NAN}) {
    ModelBuilder value = good;
    value.find("encoder.layers.0.ffn.in.weight_input_scale")->values[0] = bad;
    CAPTURE(bad);
    CHECK_STATUS(verify(value), StatusCode::kInvalidModel,
                 std::isfinite(bad) ? "at [0]: int8 input scales must be > 0"
                                    : "at [0]: weights must be finite");
  }
  ModelBuilder dynamic = good;  // the multipliers belong to the static scheme only
  dynamic.raw_quantization = 3;
  CHECK_STATUS(verify(dynamic), StatusCode::kInvalidModel, "_input_scale'");
  check_scheme_gates(good, 4, "int8-per-tensor-static", 8);
}

// A per-row int8 file (plain and smoothed) of `config` whose tables are
// `table` (F32: f32_tables, F16: f16_tables) verifies, and is refused
// before `version` and without its flag.
void check_float_tables(const TransformerConfig& config, DType table, uint32_t version) {
  const bool f16 = table == DType::kF16;
  const std::string flag = f16 ? "f16_tables" : "f32_tables";
  for (bool smoothed : {false, true}) {
    CAPTURE(smoothed);
    ModelBuilder good(config, DType::kI8);
    good.smoothed = smoothed;
    good.f32_tables = !f16;
    good.f16_tables = f16;
    good.regenerate_tensors();
    VerifiedModel model;
    const std::vector<uint8_t> bytes = good.build();
    REQUIRE(verify_model(bytes.data(), bytes.size(), &model).is_ok());
    CHECK(model.f32_tables == !f16);
    CHECK(model.f16_tables == f16);
    CHECK(model.quantization == (smoothed ? QuantizationScheme::kInt8SmoothedPerRowDynamic
                                          : QuantizationScheme::kInt8PerRowDynamic));
    CHECK(good.find("embedding.source")->dtype == table);
    CHECK(good.find("embedding.source_scale") == nullptr);
    CHECK(good.find("encoder.layers.0.ffn.in.weight")->dtype == DType::kI8);
    CHECK(good.find("encoder.layers.0.ffn.in.weight_scale") != nullptr);
    CHECK((good.find("encoder.layers.0.ffn.in.weight_smooth") != nullptr) == smoothed);

    ModelBuilder older = good;
    older.format_version = version - 1;
    CHECK_STATUS(verify(older), StatusCode::kInvalidModel,
                 flag + " needs format version " + std::to_string(version) +
                     " or later (the file says " + std::to_string(version - 1) + ")");
    ModelBuilder unflagged = good;  // float tables in a file that does not say so
    unflagged.f32_tables = unflagged.f16_tables = false;
    CHECK_STATUS(verify(unflagged), StatusCode::kInvalidModel,
                 std::string("tensor 'embedding.source' has dtype ") + (f16 ? "f16" : "f32") +
                     ", expected i8");
    ModelBuilder both = good;
    both.f32_tables = both.f16_tables = true;
    CHECK_STATUS(verify(both), StatusCode::kInvalidModel, "f32_tables and f16_tables are both set");
  }
  // The flags belong to the per-row schemes: the per-tensor ones have F32
  // tables anyway, float files no int8 to keep them from.
  ModelBuilder per_tensor(config, DType::kI8);
  per_tensor.per_tensor = true;
  per_tensor.f32_tables = !f16;
  per_tensor.f16_tables = f16;
  per_tensor.regenerate_tensors();
  CHECK_STATUS(verify(per_tensor), StatusCode::kInvalidModel,
               flag + " is set in a file of quantization scheme int8-per-tensor-dynamic");
  ModelBuilder float_file(config, table);
  float_file.f32_tables = !f16;
  float_file.f16_tables = f16;
  CHECK_STATUS(verify(float_file), StatusCode::kInvalidModel,
               flag + " is set in a file of quantization scheme none");
}

TEST_CASE("format/model_verifier: per-row int8 files with F32 tables: version 9, per-row only") {
  check_float_tables(testing::tiny_config(), DType::kF32, 9);
}

TEST_CASE("format/model_verifier: per-row int8 files with F16 tables: version 10, untied") {
  TransformerConfig untied = testing::tiny_config();
  untied.tied_output = false;
  check_float_tables(untied, DType::kF16, 10);
  // A tied output projection would be an F16 product in an int8 file.
  TransformerConfig tied_config = untied;
  tied_config.tied_output = true;
  ModelBuilder tied(tied_config, DType::kI8);
  tied.f16_tables = true;
  tied.regenerate_tensors();
  CHECK_STATUS(verify(tied), StatusCode::kInvalidModel,
               "tensor 'output.weight' is tied to an F16 embedding table");
}

TEST_CASE("format/model_verifier: residual codes of int8 tables: version 11, per-row, int8 tables") {
  for (bool smoothed : {false, true}) {
    CAPTURE(smoothed);
    ModelBuilder good(testing::tiny_config(), DType::kI8);
    good.smoothed = smoothed;
    good.residual_tables = true;
    good.regenerate_tensors();
    VerifiedModel model;
    const std::vector<uint8_t> bytes = good.build();
    const Status status = verify_model(bytes.data(), bytes.size(), &model);
    REQUIRE_MESSAGE(status.is_ok(), status.message());
    CHECK(model.residual_tables);
    const uint32_t d = testing::tiny_config().d_model;
    const testing::BuilderTensor* residual = good.find("embedding.source_residual");
    REQUIRE(residual != nullptr);
    CHECK(residual->dtype == DType::kI8);
    CHECK(residual->shape[1] == (d + 1) / 2);
    CHECK(good.find("embedding.source_residual_scale") != nullptr);
    CHECK(good.find("output.weight_residual") == nullptr);  // a tied projection shares the table's

    ModelBuilder older = good;
    older.format_version = 10;
    CHECK_STATUS(verify(older), StatusCode::kInvalidModel,
                 "residual_tables needs format version 11 or later (the file says 10)");
    ModelBuilder unflagged = good;  // residual codes in a file that does not say so
    unflagged.residual_tables = false;
    CHECK_STATUS(verify(unflagged), StatusCode::kInvalidModel,
                 "unexpected tensor 'embedding.source_residual'");
    ModelBuilder missing = good;
    REQUIRE(missing.remove_tensor("embedding.source_residual_scale"));
    CHECK_STATUS(verify(missing), StatusCode::kInvalidModel,
                 "model has no tensor 'embedding.source_residual_scale'");
    ModelBuilder eight = good;  // a 4-bit half of 8 is -8, outside [-7, 7]
    eight.find("embedding.source_residual")->int8_values[3] = static_cast<int8_t>(0x18);
    CHECK_STATUS(verify(eight), StatusCode::kInvalidModel,
                 "tensor 'embedding.source_residual' holds the residual code -8 at [0, 3]");
    ModelBuilder high = good;
    high.find("embedding.source_residual")->int8_values[5] = static_cast<int8_t>(0x81);
    const uint32_t packed = (d + 1) / 2;  // bytes per row
    CHECK_STATUS(verify(high), StatusCode::kInvalidModel,
                 "the residual code -8 at [" + std::to_string(5 / packed) + ", " +
                     std::to_string(5 % packed) + "]");
    ModelBuilder negative = good;
    negative.find("embedding.source_residual_scale")->values[2] = -1.0f;
    CHECK_STATUS(verify(negative), StatusCode::kInvalidModel, "int8 row scales must be >= 0");
    ModelBuilder with_float = good;
    with_float.f32_tables = true;
    CHECK_STATUS(verify(with_float), StatusCode::kInvalidModel,
                 "residual_tables is set with f32_tables or f16_tables");
  }
  ModelBuilder per_tensor(testing::tiny_config(), DType::kI8);
  per_tensor.per_tensor = true;
  per_tensor.residual_tables = true;
  per_tensor.regenerate_tensors();
  CHECK_STATUS(verify(per_tensor), StatusCode::kInvalidModel,
               "residual_tables is set in a file of quantization scheme int8-per-tensor-dynamic");
  ModelBuilder float_file(testing::tiny_config(), DType::kF32);
  float_file.residual_tables = true;
  CHECK_STATUS(verify(float_file), StatusCode::kInvalidModel,
               "residual_tables is set in a file of quantization scheme none");
}

TEST_CASE("format/model_verifier: unsupported features are kUnsupported") {
  ModelBuilder weight_dtype;
  weight_dtype.raw_weight_dtype = 5;
  CHECK_STATUS(verify(weight_dtype), StatusCode::kUnsupported, "weight dtype 5 is not supported");
  ModelBuilder family;  // a family_config member this runtime does not know
  family.raw_family = 3;
  CHECK_STATUS(verify(family), StatusCode::kUnsupported,
               "model family_config type 4 is not supported");
  ModelBuilder family_v1;
  family_v1.format_version = 1;
  family_v1.raw_family = 3;
  CHECK_STATUS(verify(family_v1), StatusCode::kUnsupported, "model family 3 is not supported");
  ModelBuilder activation;
  activation.raw_activation = 7;
  CHECK_STATUS(verify(activation), StatusCode::kUnsupported, "activation 7 is not supported");
  ModelBuilder tokenizer;
  tokenizer.raw_tokenizer_kind = 1;
  CHECK_STATUS(verify(tokenizer), StatusCode::kUnsupported, "tokenizer kind 1 is not supported");
}

TEST_CASE("format/model_verifier: required tables and the tokenizer model") {
  ModelBuilder no_config;
  no_config.include_config = false;
  CHECK_STATUS(verify(no_config), StatusCode::kInvalidModel, "model has no family_config");
  ModelBuilder no_special;
  no_special.include_special_tokens = false;
  CHECK_STATUS(verify(no_special), StatusCode::kInvalidModel, "model has no special tokens");
  ModelBuilder no_tokenizer;
  no_tokenizer.include_tokenizer = false;
  CHECK_STATUS(verify(no_tokenizer), StatusCode::kInvalidModel, "model has no tokenizer");
  ModelBuilder empty_tokenizer;
  empty_tokenizer.tokenizer_model.clear();
  CHECK_STATUS(verify(empty_tokenizer), StatusCode::kInvalidModel, "empty source tokenizer model");
  ModelBuilder no_tensors;
  no_tensors.tensors.clear();
  CHECK_STATUS(verify(no_tensors), StatusCode::kInvalidModel, "model has no tensors");
}

TEST_CASE("format/model_verifier: tensor names must be non-empty and NUL-free") {
  ModelBuilder empty;
  empty.add_tensor("", {1}, DType::kF32);
  CHECK_STATUS(verify(empty), StatusCode::kInvalidModel, "has no name");
  ModelBuilder nul;
  nul.add_tensor(std::string("output.weight\0x", 15), {1}, DType::kF32);
  CHECK_STATUS(verify(nul), StatusCode::kInvalidModel, "name with a NUL byte");
}

TEST_CASE("format/model_verifier: the verified view points into the buffer") {
  ModelBuilder builder;
  BuiltLayout layout;
  const std::vector<uint8_t> bytes = builder.build(&layout);
  VerifiedModel model;
  const Status status = verify_model(bytes.data(), bytes.size(), &model);
  CHECK_MESSAGE(status.is_ok(), std::string(status.message()));
  CHECK(model.weights_offset == layout.weights_offset);
  CHECK(model.weights_size == layout.weights_size);
  CHECK(model.tensor_count == builder.tensors.size());
  const TensorView* view = find_tensor_view(model.tensors.get(), model.tensor_count, "output.weight");
  CHECK(view != nullptr);
  if (view == nullptr) return;
  CHECK(view->offset == layout.tensor_offsets.at("output.weight"));
  CHECK(static_cast<const uint8_t*>(view->data) == bytes.data() + layout.weights_offset + view->offset);
  for (size_t i = 0; i < model.tensor_count; ++i) {
    CHECK(find_tensor_view(model.tensors.get(), model.tensor_count, model.tensors[i].name) ==
          &model.tensors[i]);
  }
  char text[64];
  const uint32_t shape[] = {1024, 255};
  format_shape(text, sizeof(text), shape, 2);
  CHECK(std::string(text) == "[1024, 255]");
  format_shape(text, 6, shape, 2);
  CHECK(std::string(text) == "[1024");
}

// Issue 13, defect 1: NaN written over a norm, the output bias or the output
// projection passed the verifier, and greedy search then read past the
// logits row. Every placement, in every weight dtype, is now refused at
// load with the tensor and the element named.
TEST_CASE("format/model_verifier: a NaN or infinite weight anywhere is refused, f32 f16 and i8") {
  TransformerConfig config = testing::tiny_config();
  config.output_bias = true;
  config.decoder_final_norm = true;
  const char* const kFloatPlacements[] = {
      "embedding.source",     "embedding.target", "position.table",
      "output.weight",        "output.bias",      "encoder.layers.0.self_attn.qkv.weight",
      "encoder.layers.0.ffn.in.bias", "decoder.layers.0.cross_attn.kv.weight",
      "decoder.layers.0.ffn_norm.weight", "decoder.final_norm.bias",
  };
  for (DType dtype : {DType::kF32, DType::kF16, DType::kI8}) {
    for (const char* name : kFloatPlacements) {
      for (float bad : {NAN, INFINITY, -INFINITY}) {
        ModelBuilder builder(config, dtype);
        testing::BuilderTensor* tensor = builder.find(name);
        REQUIRE(tensor != nullptr);
        // An int8 matrix cannot hold a NaN: its row scale does instead.
        std::string target = name;
        if (tensor->dtype == DType::kI8) {
          target += "_scale";
          tensor = builder.find(target);
          REQUIRE(tensor != nullptr);
        }
        const size_t at = tensor->values.size() - 1;  // the last element: [rows - 1, cols - 1]
        tensor->values[at] = bad;
        CAPTURE(dtype_name(dtype));
        CAPTURE(target);
        CAPTURE(bad);
        const std::string expected = "tensor '" + target + "' holds " +
                                     (std::isnan(bad) ? "NaN" : (bad > 0.0f ? "+inf" : "-inf"));
        CHECK_STATUS(verify(builder), StatusCode::kInvalidModel, expected);
        CHECK_STATUS(verify(builder), StatusCode::kInvalidModel, "weights must be finite");
      }
    }
  }
}

TEST_CASE("format/model_verifier: the element of a bad value is named by its coordinates") {
  ModelBuilder builder;  // ffn.in.weight is [16, 8]
  builder.find("encoder.layers.0.ffn.in.weight")->values[3 * 8 + 5] = NAN;
  CHECK_STATUS(verify(builder), StatusCode::kInvalidModel,
               "tensor 'encoder.layers.0.ffn.in.weight' holds NaN at [3, 5]");
}

TEST_CASE("format/model_verifier: an int8 code of -128 is refused at load") {
  ModelBuilder builder(testing::tiny_config(), DType::kI8);
  testing::BuilderTensor* tensor = builder.find("decoder.layers.0.ffn.out.weight");
  REQUIRE(tensor != nullptr);
  REQUIRE(!tensor->int8_values.empty());
  tensor->int8_values[10] = -128;
  CHECK_STATUS(verify(builder), StatusCode::kInvalidModel,
               "tensor 'decoder.layers.0.ffn.out.weight' holds the int8 code -128 at [0, 10]");
}

TEST_CASE("format/model_verifier: large but finite weights pass (overflow is the search's job)") {
  ModelBuilder builder;
  builder.find("output.weight")->values[0] = 3.4e38f;
  builder.find("position.table")->values[0] = -3.4e38f;
  const Status status = verify(builder);
  CHECK_MESSAGE(status.is_ok(), std::string(status.message()));
}

TEST_CASE("format/model_verifier: more tensors than kMaxTensors are refused before any is read") {
  ModelBuilder builder;
  for (uint32_t i = 0; i <= kMaxTensors; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "zz.extra.%05u", i);
    builder.add_tensor(name, {1}, DType::kF32);
  }
  CHECK_STATUS(verify(builder), StatusCode::kInvalidModel, "tensors; the limit is 8192");
}

// Issue 13, defect 8: the tokenizer's bytes are checked at load. A file
// records their CRC-32; any change to them is then refused, even one that
// leaves the SentencePiece model well-formed (a score, a string).
TEST_CASE("format/model_verifier: the tokenizer's CRC-32 is checked when the file records one") {
  ModelBuilder builder;
  const std::string good = builder.tokenizer_model;
  builder.tokenizer_crc32 = int64_t{crc32(good.data(), good.size())};
  CHECK(verify(builder).is_ok());
  // One byte of one piece's score changed: still a valid SentencePiece model.
  const size_t score = good.find("<unk>") + 5 + 2;  // the fixed32 after the text
  builder.tokenizer_model[score] = static_cast<char>(builder.tokenizer_model[score] ^ 0x01);
  CHECK_STATUS(verify(builder), StatusCode::kInvalidModel, "tokenizer model: CRC-32 is");
  CHECK_STATUS(verify(builder), StatusCode::kInvalidModel, "(the file is corrupt)");
  builder.tokenizer_crc32 = -1;  // a file without a checksum: the structure alone
  const Status unrecorded = verify(builder);
  CHECK_MESSAGE(unrecorded.is_ok(), std::string(unrecorded.message()));
  builder.tokenizer_crc32 = int64_t{1} << 40;  // not a CRC-32
  CHECK_STATUS(verify(builder), StatusCode::kInvalidModel, "tokenizer model: CRC-32 is");
}

// Format 3: the decoding table, the piece vocabularies and a source
// vocabulary of its own are checked like the rest of the header.
TEST_CASE("format/model_verifier: format-3 decoding defaults are range-checked") {
  ModelBuilder builder;
  const uint32_t vocab = builder.config.vocab_size;
  testing::BuilderDecoding good;
  good.rules = SearchRules::kMarian;
  good.beam_size = 6;
  good.length_penalty = 0.6f;
  good.word_penalty = 0.5f;
  good.max_len_a = 3.0f;
  good.max_len_b = 0.0f;
  good.banned_tokens = {1, 5};
  builder.decoding = good;
  CHECK(verify(builder).is_ok());

  auto with = [&](auto change) {
    ModelBuilder b = builder;
    change(*b.decoding);
    return verify(b);
  };
  CHECK_STATUS(with([](testing::BuilderDecoding& d) { d.raw_rules = 9; }), StatusCode::kUnsupported,
               "search rules 9 are not supported");
  CHECK_STATUS(with([](testing::BuilderDecoding& d) { d.beam_size = 0; }),
               StatusCode::kInvalidModel, "decoding.beam_size = 0 is out of range");
  CHECK_STATUS(with([](testing::BuilderDecoding& d) { d.beam_size = 65; }),
               StatusCode::kInvalidModel, "decoding.beam_size = 65 is out of range");
  CHECK_STATUS(with([](testing::BuilderDecoding& d) { d.length_penalty = NAN; }),
               StatusCode::kInvalidModel, "decoding.length_penalty");
  CHECK_STATUS(with([](testing::BuilderDecoding& d) { d.max_len_a = -1.0f; }),
               StatusCode::kInvalidModel, "decoding.max_len_a");
  CHECK_STATUS(with([](testing::BuilderDecoding& d) { d.max_len_b = INFINITY; }),
               StatusCode::kInvalidModel, "decoding.max_len_b");
  CHECK_STATUS(with([&](testing::BuilderDecoding& d) {
                 d.banned_tokens = {2, static_cast<int32_t>(vocab)};
               }),
               StatusCode::kInvalidModel, "special token banned");
  CHECK_STATUS(with([&](testing::BuilderDecoding& d) {
                 d.banned_tokens.assign(vocab + 1, 0);
               }),
               StatusCode::kInvalidModel, "decoding bans");
}

// The lexical shortlist (any version): lists that index the vocabularies,
// so that a batch's candidates need no checks at run time.
TEST_CASE("format/model_verifier: a lexical shortlist's lists are checked") {
  ModelBuilder builder;
  const uint32_t vocab = builder.config.vocab_size;
  testing::BuilderShortlist good;
  good.first = 4;
  good.best = 2;
  good.offsets = {0, 2, 2, 3};  // source ids 0..2; ids from 3 on list nothing
  good.targets = {5, 9, vocab - 1};
  builder.shortlist = good;
  REQUIRE(verify(builder).is_ok());
  VerifiedModel verified;
  const std::vector<uint8_t> bytes = builder.build();
  REQUIRE(verify_model(bytes.data(), bytes.size(), &verified).is_ok());
  CHECK(verified.has_shortlist);
  CHECK(verified.shortlist.source_ids == 3);
  CHECK(verified.shortlist.targets[2] == vocab - 1);

  auto with = [&](auto change) {
    ModelBuilder b = builder;
    change(*b.shortlist);
    return verify(b);
  };
  CHECK_STATUS(with([](testing::BuilderShortlist& l) { l.offsets.clear(); }),
               StatusCode::kInvalidModel, "the shortlist has no offsets");
  CHECK_STATUS(with([](testing::BuilderShortlist& l) { l.offsets = {1, 2, 2, 3}; }),
               StatusCode::kInvalidModel, "do not run from 0 to its target count");
  CHECK_STATUS(with([](testing::BuilderShortlist& l) { l.offsets = {0, 2, 2, 2}; }),
               StatusCode::kInvalidModel, "do not run from 0 to its target count");
  CHECK_STATUS(with([](testing::BuilderShortlist& l) { l.offsets = {0, 3, 2, 3}; }),
               StatusCode::kInvalidModel, "offsets fall at source id 1");
  CHECK_STATUS(with([](testing::BuilderShortlist& l) { l.targets = {9, 5, 1}; }),
               StatusCode::kInvalidModel, "source id 0 is not ascending ids");
  CHECK_STATUS(with([&](testing::BuilderShortlist& l) { l.targets = {5, 9, vocab}; }),
               StatusCode::kInvalidModel, "source id 2 is not ascending ids");
  CHECK_STATUS(with([&](testing::BuilderShortlist& l) { l.first = vocab + 1; }),
               StatusCode::kInvalidModel, "first");
  CHECK_STATUS(with([&](testing::BuilderShortlist& l) {
                 l.offsets.assign(vocab + 2, 3);
                 l.offsets[0] = 0;
               }),
               StatusCode::kInvalidModel, "lists for");
}

TEST_CASE("format/model_verifier: format-3 piece vocabularies and source vocabulary size") {
  ModelBuilder builder;
  const uint32_t vocab = builder.config.vocab_size;
  std::vector<std::string> pieces;
  for (uint32_t i = 0; i < vocab; ++i) pieces.push_back("p" + std::to_string(i));
  builder.source_pieces = pieces;
  builder.target_pieces = pieces;
  CHECK(verify(builder).is_ok());

  ModelBuilder short_list = builder;
  short_list.source_pieces->pop_back();
  CHECK_STATUS(verify(short_list), StatusCode::kInvalidModel,
               "the source vocabulary has " + std::to_string(vocab - 1) + " pieces");
  ModelBuilder empty_piece = builder;
  (*empty_piece.target_pieces)[3].clear();
  CHECK_STATUS(verify(empty_piece), StatusCode::kInvalidModel,
               "target vocabulary piece 3 is empty or holds a NUL");
  ModelBuilder nul_piece = builder;
  (*nul_piece.source_pieces)[4] = std::string("a\0b", 3);
  CHECK_STATUS(verify(nul_piece), StatusCode::kInvalidModel,
               "source vocabulary piece 4 is empty or holds a NUL");
  ModelBuilder bad_unk = builder;
  bad_unk.source_unk_id = static_cast<int32_t>(vocab);
  CHECK_STATUS(verify(bad_unk), StatusCode::kInvalidModel, "special token source unk");

  // A source vocabulary of its own size needs its own tokenizer table.
  ModelBuilder own_source;
  own_source.config.source_vocab_size = own_source.config.vocab_size + 3;
  own_source.config.shared_embeddings = false;
  own_source.regenerate_tensors();
  CHECK_STATUS(verify(own_source), StatusCode::kInvalidModel, "but the model has one tokenizer");
  own_source.target_tokenizer_model = own_source.tokenizer_model;
  const Status with_target = verify(own_source);
  CHECK_MESSAGE(with_target.is_ok(), std::string(with_target.message()));
  ModelBuilder shared = own_source;
  shared.config.shared_embeddings = true;
  CHECK_STATUS(verify(shared), StatusCode::kInvalidModel,
               "config.shared_embeddings needs source_vocab_size = vocab_size");
}

}  // namespace
}  // namespace edgemt

namespace edgemt {
namespace {

// What verify_model told its callback: each tensor it checked.
struct Checked {
  std::vector<std::string> names;
  std::vector<const void*> data;
};

void record_checked(const void* context, const TensorView& tensor) {
  Checked& c = *const_cast<Checked*>(static_cast<const Checked*>(context));
  c.names.push_back(tensor.name);
  c.data.push_back(tensor.data);
}

TEST_CASE("format/model_verifier: the caller is told of each stored tensor once checked") {
  // Shared and tied embeddings: three names, one stored tensor, told once.
  TransformerConfig tied = testing::tiny_config();
  tied.shared_embeddings = tied.tied_output = true;
  tied.output_bias = true;
  ModelBuilder builder(tied, DType::kF32);
  const std::vector<uint8_t> bytes = builder.build();
  VerifiedModel model;
  Checked checked;
  VerifyOptions options;
  options.checked = &record_checked;
  options.context = &checked;
  REQUIRE(verify_model(bytes.data(), bytes.size(), &model, options).is_ok());
  std::vector<const void*> distinct;
  for (size_t i = 0; i < model.tensor_count; ++i) {
    if (std::find(distinct.begin(), distinct.end(), model.tensors[i].data) == distinct.end()) {
      distinct.push_back(model.tensors[i].data);
    }
  }
  CHECK(checked.names.size() == distinct.size());
  CHECK(checked.names.size() < model.tensor_count);  // the aliases were not told again
  for (const void* data : distinct) {
    CHECK(std::count(checked.data.begin(), checked.data.end(), data) == 1);
  }
  // A file that fails its value check stops there: the bad tensor is not told.
  ModelBuilder bad(tied, DType::kF32);
  testing::BuilderTensor* bias = bad.find("output.bias");
  REQUIRE(bias != nullptr);
  bias->values[0] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<uint8_t> bad_bytes = bad.build();
  Checked bad_checked;
  options.context = &bad_checked;
  CHECK(verify_model(bad_bytes.data(), bad_bytes.size(), &model, options).code() ==
        StatusCode::kInvalidModel);
  CHECK(std::find(bad_checked.names.begin(), bad_checked.names.end(), std::string("output.bias")) ==
        bad_checked.names.end());
}

}  // namespace
}  // namespace edgemt
