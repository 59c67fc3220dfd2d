// weights.cc: a model's layer weights are allocated for the layers its file
// has, not for the most a stack may hold (kMaxLayers).
#include "models/transformer/weights.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>

#include "support/model_builder.h"

namespace edgemt::transformer {
namespace {

TEST_CASE("models/transformer/weights: layers allocated for the file's, up to a stack's most") {
  // Fixed arrays of kMaxLayers layers a stack made every loaded model 2.2 MB
  // larger, whatever its size (a page fault per 4 KiB at load, resident after).
  CHECK(sizeof(TransformerWeights) < 16 * 1024);
  for (const uint32_t layers : {1u, 3u, static_cast<uint32_t>(kMaxLayers)}) {
    CAPTURE(layers);
    testing::ModelBuilder builder(testing::tiny_config(), DType::kF32);
    builder.config.encoder_layers = layers;
    builder.config.decoder_layers = layers;
    builder.regenerate_tensors();
    testing::TempFile file(builder.build());
    REQUIRE(file.ok());
    std::unique_ptr<Model> model;
    const Status loaded = Model::load(file.path().c_str(), &model);
    REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
    TransformerWeights weights;
    const Status status = load_weights(*model, NetworkOptions{}, &weights);
    REQUIRE_MESSAGE(status.is_ok(), status.message());
    const size_t d = builder.config.d_model;
    CHECK(weights.encoder[layers - 1].self_qkv.out_features() == 3 * d);
    CHECK(weights.encoder[layers - 1].ffn_norm.weight != nullptr);
    CHECK(weights.decoder[layers - 1].cross_kv.out_features() == 2 * d);
    CHECK(weights.decoder[layers - 1].ffn_norm.weight != nullptr);
  }
}

}  // namespace
}  // namespace edgemt::transformer
