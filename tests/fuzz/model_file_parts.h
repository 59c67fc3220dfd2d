// ModelFileParts: an edgemt model file taken apart into every field the
// format has, so a fuzzer can change one field and write a well-formed file
// again (structure-aware mutation): random bytes almost never get past the
// FlatBuffers verifier, mutated fields reach every semantic check behind it,
// and a regenerated consistent tensor table reaches the Translator itself.
//
// decode() needs only a FlatBuffer the FlatBuffers verifier accepts (the
// semantics may be anything); encode() writes exactly what the parts say,
// consistent or not. Values of absent tables are left at defaults and
// `has_*` says whether to write the table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace edgemt::fuzz {

struct TensorEntry {
  std::string name;
  std::vector<uint32_t> shape;
  int8_t dtype = 0;      // raw schema value
  uint64_t offset = 0;   // from the start of the weight segment
  uint64_t size = 0;
};

struct ModelFileParts {
  uint32_t format_version = 1;
  int8_t family = 0;
  bool has_config = true;
  uint32_t encoder_layers = 0, decoder_layers = 0, d_model = 0, heads = 0, ffn_dim = 0;
  int8_t activation = 0, norm_placement = 0;
  float layer_norm_eps = 1e-5f, embedding_scale = 1.0f;
  bool encoder_final_norm = false, decoder_final_norm = false, tied_output = false,
       output_bias = false, shared_embeddings = false;
  uint32_t vocab_size = 0, max_positions = 0;
  bool has_special_tokens = true;
  int32_t pad = 0, unk = 0, bos = 0, eos = 0, decoder_start = 0;
  std::string source_language, target_language;
  int8_t weight_dtype = 0, quantization = 0;
  bool has_tokenizer = true;
  int8_t tokenizer_kind = 0;
  std::vector<uint8_t> tokenizer_model;
  int64_t tokenizer_crc32 = -1;  // -1: not recorded
  bool append_eos_to_source = true;
  bool has_provenance = true;
  std::string provenance[5];
  uint64_t weights_size = 0;
  std::vector<TensorEntry> tensors;
  std::vector<uint8_t> segment;  // bytes from the 64-aligned segment start to the end
};

// False when `data` is not a size-prefixed FlatBuffer the verifier accepts.
bool decode(const uint8_t* data, size_t size, ModelFileParts* parts);
std::vector<uint8_t> encode(const ModelFileParts& parts);

// Applies one random structural change. `mutate_bytes` mutates a byte
// vector in place within `max_size` (libFuzzer's LLVMFuzzerMutate).
using ByteMutator = size_t (*)(uint8_t* data, size_t size, size_t max_size);
void mutate(ModelFileParts* parts, std::mt19937* rng, ByteMutator mutate_bytes);

}  // namespace edgemt::fuzz
