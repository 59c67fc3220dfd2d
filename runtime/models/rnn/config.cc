#include "models/rnn/config.h"

#include <cstdio>

#include "edgemt/limits.h"
#include "models/config_check.h"
#include "models/families.h"

namespace edgemt::rnn {
namespace {

const char* query_name(RnnQuery query) {
  return query == RnnQuery::kCurrent ? "current decoder state" : "previous decoder state";
}

const char* decoder_input_name(RnnDecoderInput input) {
  switch (input) {
    case RnnDecoderInput::kEmbedding: return "embedding";
    case RnnDecoderInput::kEmbeddingContext: return "[embedding; context]";
    case RnnDecoderInput::kEmbeddingInputFeed: return "[embedding; previous attentional vector] (input feed)";
  }
  return "unknown";
}

const char* output_name(RnnOutput output) {
  switch (output) {
    case RnnOutput::kTanhCombine: return "W_o tanh(W_c [context; state])";
    case RnnOutput::kLinearCombine: return "W_o (W_c [context; state])";
    case RnnOutput::kStateContext: return "W_o [state; context]";
  }
  return "unknown";
}

}  // namespace

const char* rnn_cell_name(RnnCell cell) { return cell == RnnCell::kLstm ? "LSTM" : "GRU"; }

const char* rnn_score_name(RnnScore score) {
  switch (score) {
    case RnnScore::kDot: return "dot";
    case RnnScore::kGeneral: return "general";
    case RnnScore::kAdditive: return "additive";
  }
  return "unknown";
}

const RnnConfig& rnn_config(const Model& model) { return family_config(model).as<RnnConfig>(); }

Status verify_rnn_config(const RnnConfig& c) {
  EDGEMT_RETURN_IF_ERROR(check_config_range("layers", c.layers, kMaxRnnLayers));
  EDGEMT_RETURN_IF_ERROR(check_config_range("hidden", c.hidden, kMaxRnnHidden));
  EDGEMT_RETURN_IF_ERROR(check_config_range("source_embedding_dim", c.source_embedding_dim, kMaxRnnEmbeddingDim));
  EDGEMT_RETURN_IF_ERROR(check_config_range("target_embedding_dim", c.target_embedding_dim, kMaxRnnEmbeddingDim));
  EDGEMT_RETURN_IF_ERROR(check_config_range("vocab_size", c.vocab_size, kMaxVocabSize));
  EDGEMT_RETURN_IF_ERROR(check_config_range("max_positions", c.max_positions, kMaxPositions));
  if (c.source_vocab_size != 0) {
    EDGEMT_RETURN_IF_ERROR(check_config_range("source_vocab_size", c.source_vocab_size, kMaxVocabSize));
  }
  if (c.bidirectional_encoder && c.hidden % 2 != 0) {
    return Status::error(StatusCode::kInvalidModel,
                         "config.hidden = %u must be even for a bidirectional encoder", c.hidden);
  }
  if (c.query_bias && c.score != RnnScore::kAdditive) {
    return Status::error(StatusCode::kInvalidModel, "config.query_bias needs an additive score");
  }
  if (c.combine_bias && c.output == RnnOutput::kStateContext) {
    return Status::error(StatusCode::kInvalidModel,
                         "config.combine_bias needs a combine output (not StateContext)");
  }
  // The attention reads the previous state before the step only to feed
  // its context into the step (Bahdanau); with the current state it runs
  // after the layers, and its context can only reach the output.
  if ((c.query == RnnQuery::kPrevious) != (c.decoder_input == RnnDecoderInput::kEmbeddingContext)) {
    return Status::error(StatusCode::kInvalidModel,
                         "config.query Previous goes with decoder_input EmbeddingContext, and only with it");
  }
  if (c.decoder_input == RnnDecoderInput::kEmbeddingInputFeed && c.output == RnnOutput::kStateContext) {
    return Status::error(StatusCode::kInvalidModel,
                         "config.decoder_input EmbeddingInputFeed needs an attentional vector (a combine output)");
  }
  return Status::ok();
}

void describe_config(const RnnConfig& c, char* out, size_t size) {
  std::snprintf(out, size,
                "  cell             %s, %u layer%s, hidden %u\n"
                "  encoder          %s\n"
                "  embeddings       %u source, %u target\n"
                "  attention        %s score%s, queried by the %s\n"
                "  decoder input    %s\n"
                "  output           %s%s\n"
                "  vocabulary       %u source, %u target\n",
                rnn_cell_name(c.cell), c.layers, c.layers == 1 ? "" : "s", c.hidden,
                c.bidirectional_encoder ? "bidirectional (hidden/2 per direction)" : "unidirectional",
                c.source_embedding_dim, c.target_embedding_dim, rnn_score_name(c.score),
                c.query_bias ? " (query bias)" : "", query_name(c.query),
                decoder_input_name(c.decoder_input), output_name(c.output),
                c.combine_bias ? ", W_c with bias" : "", source_vocab_size(c), c.vocab_size);
}

}  // namespace edgemt::rnn
