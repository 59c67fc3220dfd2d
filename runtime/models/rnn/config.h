// The RNN family's hyper-parameters and their limits, as the model file's
// RnnConfig table holds them (schema/edgemt.fbs, which explains each
// choice), read and checked once at load (config.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/model.h"
#include "edgemt/status.h"

namespace edgemt::rnn {

// Limits of this family's config, checked by the verifier at load (with the
// family-neutral ones of edgemt/limits.h).
inline constexpr uint32_t kMaxRnnLayers = 16;
inline constexpr uint32_t kMaxRnnHidden = 8192;
inline constexpr uint32_t kMaxRnnEmbeddingDim = 8192;

enum class RnnCell : uint8_t { kLstm = 0, kGru = 1 };
enum class RnnScore : uint8_t { kDot = 0, kGeneral = 1, kAdditive = 2 };
enum class RnnQuery : uint8_t { kCurrent = 0, kPrevious = 1 };
enum class RnnDecoderInput : uint8_t { kEmbedding = 0, kEmbeddingContext = 1, kEmbeddingInputFeed = 2 };
enum class RnnOutput : uint8_t { kTanhCombine = 0, kLinearCombine = 1, kStateContext = 2 };

struct RnnConfig {
  RnnCell cell = RnnCell::kLstm;
  uint32_t layers = 0;
  bool bidirectional_encoder = false;
  uint32_t source_embedding_dim = 0;
  uint32_t target_embedding_dim = 0;
  uint32_t hidden = 0;
  RnnScore score = RnnScore::kDot;
  bool query_bias = false;
  RnnQuery query = RnnQuery::kCurrent;
  RnnDecoderInput decoder_input = RnnDecoderInput::kEmbedding;
  RnnOutput output = RnnOutput::kTanhCombine;
  bool combine_bias = false;
  uint32_t vocab_size = 0;
  uint32_t source_vocab_size = 0;  // 0: vocab_size
  uint32_t max_positions = 0;
};

// Gates per cell: LSTM i, f, g, o; GRU r, z, n.
inline size_t rnn_gates(const RnnConfig& c) { return c.cell == RnnCell::kLstm ? 4 : 3; }
// Units of one encoder direction (H/2 when bidirectional).
inline size_t rnn_encoder_units(const RnnConfig& c) {
  return c.bidirectional_encoder ? c.hidden / 2 : c.hidden;
}
// Width of the first decoder layer's input.
inline size_t rnn_decoder_input_dim(const RnnConfig& c) {
  return c.target_embedding_dim + (c.decoder_input == RnnDecoderInput::kEmbedding ? 0 : c.hidden);
}
// Width of the output projection's input.
inline size_t rnn_output_input_dim(const RnnConfig& c) {
  return c.output == RnnOutput::kStateContext ? 2 * size_t{c.hidden} : c.hidden;
}
inline uint32_t source_vocab_size(const RnnConfig& c) {
  return c.source_vocab_size != 0 ? c.source_vocab_size : c.vocab_size;
}
inline uint32_t vocab_size(const RnnConfig& c) { return c.vocab_size; }
inline uint32_t max_sequence_length(const RnnConfig& c) { return c.max_positions; }

const char* rnn_cell_name(RnnCell cell);     // "LSTM", "GRU"
const char* rnn_score_name(RnnScore score);  // "dot", "general", "additive"

// Every value in range and the choices consistent (kInvalidModel naming
// the field otherwise).
[[nodiscard]] Status verify_rnn_config(const RnnConfig& config);

// The config of a verified model of this family.
const RnnConfig& rnn_config(const Model& model);

// The config as the indented lines `edgemt inspect` prints.
void describe_config(const RnnConfig& config, char* out, size_t size);

}  // namespace edgemt::rnn
