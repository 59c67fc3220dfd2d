// families.cc: the registry every family is reached through. A built
// Transformer file comes back as the Transformer family, with the same facts
// through the family-neutral Model accessors as in its config, and its
// EncoderDecoder runs.
#include "models/families.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "kernels/f32_gemm.h"
#include "models/transformer/tensor_layout.h"
#include "models/transformer/transformer.h"
#include "support/model_builder.h"
#include "support/planned_network.h"

using namespace edgemt::transformer;  // the family under test

namespace edgemt {
namespace {

using testing::ModelBuilder;
using testing::load_built_model;

TEST_CASE("models/families: a Transformer file is the Transformer family") {
  ModelBuilder builder;
  builder.config.max_positions = 24;
  builder.regenerate_tensors();
  std::unique_ptr<Model> model = load_built_model(builder);
  const FamilyConfig& family = family_config(*model);
  CHECK(family.id == FamilyId::TransformerConfig);
  CHECK(std::string(model->family()) == "transformer");
  CHECK(std::string(family_name(FamilyId::TransformerConfig)) == "transformer");
  CHECK(model->vocab_size() == builder.config.vocab_size);
  CHECK(model->max_sequence_length() == 24);
  CHECK(family_vocab_size(family) == builder.config.vocab_size);
  CHECK(transformer_config(*model).d_model == builder.config.d_model);
  CHECK(verify_transformer_config(family.as<TransformerConfig>()).is_ok());
}

TEST_CASE("models/families: the registry finds each family by id and by union member") {
  const Family* transformer = find_family(FamilyId::TransformerConfig);
  REQUIRE(transformer != nullptr);
  CHECK(transformer == &transformer::kFamily);
  CHECK(std::string(transformer->name) == "transformer");
  CHECK(find_family(FamilyId::NONE) == nullptr);
  CHECK(find_family(static_cast<FamilyId>(200)) == nullptr);
  CHECK(std::string(family_name(static_cast<FamilyId>(200))) == "unknown");
  FamilyConfig unknown;
  unknown.id = static_cast<FamilyId>(200);
  CHECK(find_family(unknown.id) == nullptr);
  CHECK(family_vocab_size(unknown) == 0);
}

TEST_CASE("models/families: describe_config is the family's own description") {
  std::unique_ptr<Model> model = load_built_model(ModelBuilder());
  char text[1024];
  model->describe_config(text, sizeof(text));
  char expected[1024];
  describe_config(transformer_config(*model), expected, sizeof(expected));
  CHECK(std::string(text) == expected);
  CHECK(std::strstr(text, "  layers ") != nullptr);
  char small[8];
  model->describe_config(small, sizeof(small));  // truncated, still terminated
  CHECK(std::strlen(small) == 7);
}

TEST_CASE("models/families: the tensor walk is the family's") {
  ModelBuilder builder;
  std::unique_ptr<Model> model = load_built_model(builder);
  size_t walked = 0;
  CHECK(for_each_expected_tensor(family_config(*model), DType::kF32,
                                 [&](const ExpectedTensor& tensor) {
                                   CHECK(model->find_tensor(tensor.name) != nullptr);
                                   ++walked;
                                   return true;
                                 }));
  CHECK(walked == expected_tensor_count(builder.config, DType::kF32));
}

TEST_CASE("models/families: create_encoder_decoder plans, encodes and decodes") {
  std::unique_ptr<Model> model = load_built_model(ModelBuilder());
  std::unique_ptr<EncoderDecoder> network;
  const Status created = create_encoder_decoder(*model, NetworkOptions{}, &network);
  INFO(created.message());
  REQUIRE(created.is_ok());
  char path[320];
  network->describe_compute_path(path, sizeof(path));
  // The builder's model has no tied output projection; its ReLU feed-forward
  // blocks skip zeros on the own f32 GEMM.
  const std::string expected =
      kernels::f32::replaces_xnnpack()
          ? std::string("f32 (own f32 GEMM, ") + kernels::f32::fast_gemm_kernel_name() +
                " kernel; ReLU zeros skipped)"
          : std::string("f32 (XNNPACK)");
  CHECK(std::string(path) == expected);

  RunShape shape;
  shape.source_rows = 4;
  shape.max_source_len = 4;
  shape.rows = 1;
  shape.max_target_len = 3;
  const testing::ArenaMemory memory = testing::plan_network(*network, shape);

  const int32_t ids[3] = {5, 6, 3};
  const size_t offsets[2] = {0, 3};
  PackedSequences sources;
  sources.count = 1;
  sources.offsets = offsets;
  Execution execution;
  REQUIRE(network->encode(execution, ids, sources).is_ok());
  const int32_t token = 2;
  const size_t row = 0;
  DecoderStep step;
  step.rows = 1;
  step.tokens = &token;
  step.row_source = &row;
  step.row_slot = &row;
  REQUIRE(network->decode_step(execution, sources, step).is_ok());
  bool finite = true;
  for (uint32_t v = 0; v < model->vocab_size(); ++v) finite &= std::isfinite(network->logits()[v]);
  CHECK(finite);
}

}  // namespace
}  // namespace edgemt
