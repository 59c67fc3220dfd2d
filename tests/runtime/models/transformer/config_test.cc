// config.cc: the Transformer config's check and description. (The verifier
// test walks every out-of-range field through a whole file.)
#include "models/transformer/config.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "edgemt/limits.h"
#include "support/model_builder.h"

using namespace edgemt::transformer;  // the family under test

namespace edgemt {
namespace {

TEST_CASE("models/transformer/config: the limits bound every field") {
  TransformerConfig config = testing::tiny_config();
  CHECK(verify_transformer_config(config).is_ok());
  config.encoder_layers = kMaxLayersPerStack;
  CHECK(verify_transformer_config(config).is_ok());
  config.encoder_layers = kMaxLayersPerStack + 1;
  CHECK(verify_transformer_config(config).code() == StatusCode::kInvalidModel);
  config = testing::tiny_config();
  config.ffn_dim = kMaxFfnDim + 1;
  CHECK(std::strstr(verify_transformer_config(config).message(), "config.ffn_dim") != nullptr);
  config = testing::tiny_config();
  config.d_model = kMaxDModel + 8;
  CHECK(std::strstr(verify_transformer_config(config).message(), "config.d_model") != nullptr);
}

TEST_CASE("models/transformer/config: format-3 fields are checked") {
  TransformerConfig config = testing::tiny_config();
  config.raw_decoder_self_memory = true;
  config.norm_placement = NormPlacement::kPostNorm;
  CHECK(std::strstr(verify_transformer_config(config).message(),
                    "raw_decoder_self_memory needs a pre-norm decoder") != nullptr);
  config.norm_placement = NormPlacement::kPreNorm;
  CHECK(verify_transformer_config(config).is_ok());
  config.source_vocab_size = kMaxVocabSize + 1;
  CHECK(std::strstr(verify_transformer_config(config).message(), "config.source_vocab_size") !=
        nullptr);
  config.source_vocab_size = config.vocab_size + 1;
  CHECK(verify_transformer_config(config).is_ok());
  CHECK(source_vocab_size(config) == config.vocab_size + 1);
  config.source_vocab_size = 0;
  CHECK(source_vocab_size(config) == config.vocab_size);
}

TEST_CASE("models/transformer/config: describe names every hyper-parameter") {
  TransformerConfig config = testing::tiny_config();
  config.encoder_layers = 3;
  config.decoder_layers = 2;
  config.activation = Activation::kGelu;
  config.norm_placement = NormPlacement::kPreNorm;
  char text[1024];
  describe_config(config, text, sizeof(text));
  const std::string s(text);
  CHECK(s.find("  layers           3 encoder, 2 decoder\n") != std::string::npos);
  CHECK(s.find("gelu") != std::string::npos);
  CHECK(s.find("pre-norm") != std::string::npos);
  CHECK(s.find("d_model          " + std::to_string(config.d_model)) != std::string::npos);
  CHECK(std::string(norm_placement_name(NormPlacement::kPostNorm)) == "post-norm");
}

}  // namespace
}  // namespace edgemt
