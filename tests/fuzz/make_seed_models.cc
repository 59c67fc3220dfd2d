// Writes the seed corpus of model_file_fuzzer: small valid model files of
// every weight dtype and config option, built by the test ModelBuilder.
//   edgemt_make_fuzz_seeds tests/fuzz/corpus/model_file
#include <cstdio>
#include <string>
#include <vector>

#include "support/model_builder.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  using edgemt::DType;
  struct Seed {
    const char* name;
    DType dtype;
    bool pre_norm;
    bool tied;
  };
  const Seed seeds[] = {{"tiny-f32", DType::kF32, false, false},
                        {"tiny-f16-prenorm", DType::kF16, true, false},
                        {"tiny-i8-tied", DType::kI8, false, true},
                        {"tiny-i8-prenorm", DType::kI8, true, false}};
  for (const Seed& seed : seeds) {
    edgemt::TransformerConfig config = edgemt::testing::tiny_config();
    config.d_model = 4;
    config.heads = 2;
    config.ffn_dim = 6;
    config.max_positions = 8;
    if (seed.pre_norm) {
      config.norm_placement = edgemt::NormPlacement::kPreNorm;
      config.encoder_final_norm = config.decoder_final_norm = true;
      config.output_bias = true;
      config.activation = edgemt::Activation::kGelu;
    }
    if (seed.tied) config.shared_embeddings = config.tied_output = true;
    const edgemt::testing::ModelBuilder builder(config, seed.dtype, 3);
    const std::vector<uint8_t> bytes = builder.build();
    const std::string path = std::string(argv[1]) + "/" + seed.name + ".emt";
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size()) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
    std::fclose(file);
    std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
  }
  return 0;
}
