// relu_units.cc and MatrixLoader::relu_block: the order of a ReLU block's
// hidden units, and int8 networks that load their blocks reordered compute
// the same logits, bit for bit, in every int8 scheme.
#include "models/relu_units.h"

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "models/families.h"
#include "models/matrix_loader.h"
#include "support/model_builder.h"
#include "support/planned_network.h"

namespace edgemt {
namespace {

using testing::ModelBuilder;
using testing::load_built_model;

TEST_CASE("models/relu_units: units by bias over |w|, the most likely positive first") {
  // Unit 0: |w| = 2, b = 1 (0.5); unit 1: |w| = 4, b = 1 (0.25); unit 2:
  // |w| = 2, b = 2 (1.0); unit 3: as unit 0 with scale 2, b = 2 (0.5, a tie
  // with unit 0: after it).
  const int8_t codes[16] = {1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1};
  const float scale[4] = {1.0f, 1.0f, 1.0f, 2.0f};
  const float bias[4] = {1.0f, 1.0f, 2.0f, 2.0f};
  uint32_t order[4];
  double scores[4];
  relu_unit_order(codes, scale, bias, 4, 4, order, scores);
  CHECK(order[0] == 2);
  CHECK(order[1] == 0);
  CHECK(order[2] == 3);
  CHECK(order[3] == 1);
  // No bias: every score 0, the file's order.
  relu_unit_order(codes, scale, nullptr, 4, 4, order, scores);
  for (uint32_t j = 0; j < 4; ++j) CHECK(order[j] == j);
}

// The logits of two sentences after two decoder steps of `model` loaded
// with `options`.
std::vector<float> logits_of(const Model& model, const NetworkOptions& options) {
  std::unique_ptr<EncoderDecoder> network;
  const Status created = create_encoder_decoder(model, options, &network);
  INFO(created.message());
  REQUIRE(created.is_ok());
  RunShape shape;
  shape.source_rows = 8;
  shape.max_source_len = 4;
  shape.rows = 2;
  shape.max_target_len = 3;
  const testing::ArenaMemory memory = testing::plan_network(*network, shape);
  const int32_t ids[7] = {5, 6, 7, 3, 9, 8, 3};
  const size_t offsets[3] = {0, 4, 7};
  PackedSequences sources;
  sources.count = 2;
  sources.offsets = offsets;
  Execution execution;
  REQUIRE(network->encode(execution, ids, sources).is_ok());
  std::vector<float> logits;
  const int32_t tokens[2][2] = {{2, 2}, {11, 12}};
  const size_t rows[2] = {0, 1};
  for (size_t s = 0; s < 2; ++s) {
    DecoderStep step;
    step.rows = 2;
    step.step = s;
    step.tokens = tokens[s];
    step.row_source = rows;
    step.row_slot = rows;
    REQUIRE(network->decode_step(execution, sources, step).is_ok());
    logits.insert(logits.end(), network->logits(), network->logits() + 2 * model.vocab_size());
  }
  return logits;
}

TEST_CASE("models/relu_units: int8 files give the same logits with their ReLU units reordered") {
  for (int scheme = 0; scheme < 4; ++scheme) {
    transformer::TransformerConfig config = testing::tiny_config();
    config.ffn_dim = 64;
    config.encoder_layers = 2;
    ModelBuilder builder(config, DType::kI8, 7);
    builder.smoothed = scheme == 1;
    builder.per_tensor = scheme == 2;
    builder.fixed_range = scheme == 3;
    builder.regenerate_tensors();
    std::unique_ptr<Model> model = load_built_model(builder);
    // The first block's order moves units (so a block reordered on one side
    // only would change the logits).
    const TensorView* weight = model->find_tensor("encoder.layers.0.ffn.in.weight");
    REQUIRE(weight != nullptr);
    const float* scale = nullptr;
    const float* bias = nullptr;
    REQUIRE(find_row_scales(*model, weight->name, &scale).is_ok());
    REQUIRE(find_vector(*model, "encoder.layers.0.ffn.in.bias", &bias).is_ok());
    std::vector<uint32_t> order(64);
    std::vector<double> scores(64);
    relu_unit_order(static_cast<const int8_t*>(weight->data), scale, bias, 64, 8, order.data(),
                    scores.data());
    size_t moved = 0;
    for (uint32_t j = 0; j < 64; ++j) moved += order[j] != j ? 1 : 0;
    CHECK(moved > 32);

    NetworkOptions in_file_order;
    in_file_order.order_relu_units = false;
    const std::vector<float> want = logits_of(*model, in_file_order);
    const std::vector<float> got = logits_of(*model, NetworkOptions{});
    CAPTURE(scheme);
    REQUIRE(got.size() == want.size());
    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
  }
}

}  // namespace
}  // namespace edgemt
