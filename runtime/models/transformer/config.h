// The Transformer family's hyper-parameters and their limits, as the model
// file's TransformerConfig table holds them (schema/edgemt.fbs), read and
// checked once at load (config.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/model.h"
#include "edgemt/status.h"
#include "kernels/activation.h"  // Activation

namespace edgemt::transformer {

// Limits of this family's config, checked by the verifier at load (with the
// family-neutral ones of edgemt/limits.h); the converter reads them from
// here (tools/edgemt_tools/limits.py).
inline constexpr uint32_t kMaxLayersPerStack = 64;  // encoder and decoder layers, each
inline constexpr uint32_t kMaxDModel = 16384;
inline constexpr uint32_t kMaxFfnDim = 262144;

enum class NormPlacement : uint8_t { kPostNorm = 0, kPreNorm = 1 };

// A decoder layer's first block (schema/edgemt.fbs DecoderAutoregression):
// masked self-attention, or Marian's SSRU (one state vector per layer and
// hypothesis; decoder.cc).
enum class DecoderAutoregression : uint8_t { kSelfAttention = 0, kSsru = 1 };

const char* norm_placement_name(NormPlacement placement);  // "post-norm", "pre-norm"

struct TransformerConfig {
  uint32_t encoder_layers = 0;
  uint32_t decoder_layers = 0;
  uint32_t d_model = 0;
  uint32_t heads = 0;
  uint32_t ffn_dim = 0;
  Activation activation = Activation::kRelu;
  NormPlacement norm_placement = NormPlacement::kPostNorm;
  float layer_norm_eps = 1e-5f;
  bool encoder_final_norm = false;
  bool decoder_final_norm = false;
  float embedding_scale = 1.0f;
  bool tied_output = false;
  bool output_bias = false;
  bool shared_embeddings = false;
  uint32_t vocab_size = 0;
  uint32_t max_positions = 0;  // rows of position.table
  // Rows of embedding.source; 0: vocab_size (source_vocab_size() resolves it).
  uint32_t source_vocab_size = 0;
  // The first decoder input is a zero vector (plus its position), not the
  // embedding of decoder_start (Marian).
  bool zero_decoder_start = false;
  // Pre-norm decoder self-attention memory from the raw layer input after
  // the first step (Marian; schema/edgemt.fbs).
  bool raw_decoder_self_memory = false;
  DecoderAutoregression decoder_autoregression = DecoderAutoregression::kSelfAttention;
};

inline bool has_ssru_decoder(const TransformerConfig& config) {
  return config.decoder_autoregression == DecoderAutoregression::kSsru;
}

// Rows of the source embedding table: the source side's vocabulary.
inline uint32_t source_vocab_size(const TransformerConfig& config) {
  return config.source_vocab_size != 0 ? config.source_vocab_size : config.vocab_size;
}
inline uint32_t vocab_size(const TransformerConfig& config) { return config.vocab_size; }
inline uint32_t max_sequence_length(const TransformerConfig& config) { return config.max_positions; }

// Every value in range (kInvalidModel naming the field otherwise).
[[nodiscard]] Status verify_transformer_config(const TransformerConfig& config);

// The config of a verified model of this family (format/model.cc); only
// meaningful when model.family() is "transformer".
const TransformerConfig& transformer_config(const Model& model);

// The config as the indented lines `edgemt inspect` prints.
void describe_config(const TransformerConfig& config, char* out, size_t size);

}  // namespace edgemt::transformer
