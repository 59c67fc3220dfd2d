// Writes the seed corpus of model_file_fuzzer: small valid model files of
// every weight dtype and config option, built by the test ModelBuilder; and
// its SentencePiece model into the sentencepiece_model corpus.
//   edgemt_make_fuzz_seeds tests/fuzz/corpus/model_file tests/fuzz/corpus/sentencepiece_model
#include <cstdio>
#include <string>
#include <vector>

#include "support/model_builder.h"
#include "support/sentencepiece_builder.h"
#include "models/transformer/config.h"

namespace {

bool write_file(const std::string& path, const void* data, size_t size) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  const bool ok = file != nullptr && std::fwrite(data, 1, size, file) == size;
  if (file != nullptr) std::fclose(file);
  if (!ok) std::fprintf(stderr, "cannot write %s\n", path.c_str());
  std::printf("%s: %zu bytes\n", path.c_str(), size);
  return ok;
}

// The builder's tiny config, smaller still (d_model 4, ffn 6): small seeds.
edgemt::transformer::TransformerConfig seed_config() {
  edgemt::transformer::TransformerConfig config = edgemt::testing::tiny_config();
  config.d_model = 4;
  config.heads = 2;
  config.ffn_dim = 6;
  config.max_positions = 8;
  return config;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL_FILE_DIR SENTENCEPIECE_DIR\n", argv[0]);
    return 2;
  }
  using edgemt::DType;
  struct Seed {
    const char* name;
    DType dtype;
    bool pre_norm;
    bool tied;
    bool smoothed;  // format 5: Int8SmoothedPerRowDynamic, a smoothing vector per projection
    bool ssru = false;  // format 6: SSRU decoder layers
  };
  const Seed seeds[] = {{"tiny-f32", DType::kF32, false, false, false},
                        {"tiny-f16-prenorm", DType::kF16, true, false, false},
                        {"tiny-i8-tied", DType::kI8, false, true, false},
                        {"tiny-i8-prenorm", DType::kI8, true, false, false},
                        {"tiny-i8-smoothed-format-v5", DType::kI8, true, false, true},
                        {"tiny-i8-ssru-format-v6", DType::kI8, false, true, false, true}};
  for (const Seed& seed : seeds) {
    edgemt::transformer::TransformerConfig config = seed_config();
    if (seed.pre_norm) {
      config.norm_placement = edgemt::transformer::NormPlacement::kPreNorm;
      config.encoder_final_norm = config.decoder_final_norm = true;
      config.output_bias = true;
      config.activation = edgemt::Activation::kGelu;
    }
    if (seed.tied) config.shared_embeddings = config.tied_output = true;
    if (seed.ssru) config.decoder_autoregression = edgemt::transformer::DecoderAutoregression::kSsru;
    edgemt::testing::ModelBuilder builder(config, seed.dtype, 3);
    if (seed.smoothed) {
      builder.smoothed = true;
      builder.regenerate_tensors();
    }
    const std::vector<uint8_t> bytes = builder.build();
    if (!write_file(std::string(argv[1]) + "/" + seed.name + ".emt", bytes.data(), bytes.size())) {
      return 1;
    }
  }
  {
    // Format 3 as a converted framework model has it: piece vocabularies, a
    // target tokenizer, a source vocabulary of its own size, a zero first
    // decoder input, Marian's search rules with a banned list.
    edgemt::transformer::TransformerConfig config = seed_config();
    config.source_vocab_size = config.vocab_size + 2;
    config.zero_decoder_start = true;
    config.activation = edgemt::Activation::kSwish;
    edgemt::testing::ModelBuilder builder(config, DType::kF32, 5);
    std::vector<std::string> source;
    std::vector<std::string> target;
    for (uint32_t i = 0; i < config.source_vocab_size; ++i) source.push_back("s" + std::to_string(i));
    for (uint32_t i = 0; i < config.vocab_size; ++i) target.push_back("t" + std::to_string(i));
    source.back() = ">>fra<<";
    builder.source_pieces = source;
    builder.target_pieces = target;
    builder.target_tokenizer_model = builder.tokenizer_model;
    edgemt::testing::BuilderDecoding decoding;
    decoding.rules = edgemt::SearchRules::kMarian;
    decoding.beam_size = 4;
    decoding.word_penalty = 0.5f;
    decoding.max_len_a = 3.0f;
    decoding.max_len_b = 0.0f;
    decoding.banned_tokens = {1};
    builder.decoding = decoding;
    builder.format_version = 3;  // the seeds above are version 4 (with the integrity trailer)
    const std::vector<uint8_t> bytes = builder.build();
    if (!write_file(std::string(argv[1]) + "/tiny-f32-format-v3-marian.emt", bytes.data(),
                    bytes.size())) {
      return 1;
    }
  }
  {
    // A source table 2 rows larger than the tied target table, pointed at
    // the target's bytes without the config tying them (a fuzzer's find:
    // the larger table must not read its rows from the output's pack).
    edgemt::transformer::TransformerConfig config = seed_config();
    config.source_vocab_size = config.vocab_size + 2;
    config.tied_output = true;
    edgemt::testing::ModelBuilder builder(config, DType::kF32, 7);
    builder.target_tokenizer_model = builder.tokenizer_model;
    edgemt::testing::BuiltLayout layout;
    (void)builder.build(&layout);
    builder.find("embedding.source")->offset = layout.tensor_offsets.at("embedding.target");
    const std::vector<uint8_t> bytes = builder.build();
    if (!write_file(std::string(argv[1]) + "/tiny-f32-larger-source-at-tied-bytes.emt", bytes.data(),
                    bytes.size())) {
      return 1;
    }
  }
  const std::string spm = edgemt::testing::tiny_sentencepiece_model(32);
  return write_file(std::string(argv[2]) + "/builder-32.model", spm.data(), spm.size()) ? 0 : 1;
}
