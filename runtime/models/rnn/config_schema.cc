#include "models/rnn/config_schema.h"

namespace edgemt {
namespace {

// A FlatBuffers enum value inside [MIN, MAX] of its generated type.
template <typename Enum>
bool known(Enum value) {
  const int v = static_cast<int>(value);
  return v >= static_cast<int>(Enum::MIN) && v <= static_cast<int>(Enum::MAX);
}

}  // namespace

Status read_config(const format::RnnConfig& in, RnnConfig* out) {
  if (!known(in.cell()) || !known(in.score()) || !known(in.query()) || !known(in.decoder_input()) ||
      !known(in.output())) {
    return Status::error(StatusCode::kUnsupported,
                         "RNN config enum values (cell %d, score %d, query %d, decoder input %d, "
                         "output %d) are not all supported",
                         static_cast<int>(in.cell()), static_cast<int>(in.score()),
                         static_cast<int>(in.query()), static_cast<int>(in.decoder_input()),
                         static_cast<int>(in.output()));
  }
  out->cell = static_cast<RnnCell>(in.cell());
  out->layers = in.layers();
  out->bidirectional_encoder = in.bidirectional_encoder();
  out->source_embedding_dim = in.source_embedding_dim();
  out->target_embedding_dim = in.target_embedding_dim();
  out->hidden = in.hidden();
  out->score = static_cast<RnnScore>(in.score());
  out->query_bias = in.query_bias();
  out->query = static_cast<RnnQuery>(in.query());
  out->decoder_input = static_cast<RnnDecoderInput>(in.decoder_input());
  out->output = static_cast<RnnOutput>(in.output());
  out->combine_bias = in.combine_bias();
  out->vocab_size = in.vocab_size();
  out->source_vocab_size = in.source_vocab_size();
  out->max_positions = in.max_positions();
  return verify_rnn_config(*out);
}

}  // namespace edgemt
