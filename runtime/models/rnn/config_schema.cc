#include "models/rnn/config_schema.h"

namespace edgemt::rnn {

Status read_config(const format::RnnConfig& in, RnnConfig* out) {
  if (!read_enum(in.cell(), &out->cell) || !read_enum(in.score(), &out->score) ||
      !read_enum(in.query(), &out->query) || !read_enum(in.decoder_input(), &out->decoder_input) ||
      !read_enum(in.output(), &out->output)) {
    return Status::error(StatusCode::kUnsupported,
                         "RNN config enum values (cell %d, score %d, query %d, decoder input %d, "
                         "output %d) are not all supported",
                         static_cast<int>(in.cell()), static_cast<int>(in.score()),
                         static_cast<int>(in.query()), static_cast<int>(in.decoder_input()),
                         static_cast<int>(in.output()));
  }
  EDGEMT_COPY_FIELD(layers) EDGEMT_COPY_FIELD(bidirectional_encoder) EDGEMT_COPY_FIELD(hidden)
  EDGEMT_COPY_FIELD(source_embedding_dim) EDGEMT_COPY_FIELD(target_embedding_dim)
  EDGEMT_COPY_FIELD(query_bias) EDGEMT_COPY_FIELD(combine_bias) EDGEMT_COPY_FIELD(vocab_size)
  EDGEMT_COPY_FIELD(source_vocab_size) EDGEMT_COPY_FIELD(max_positions)
  return verify_rnn_config(*out);
}

}  // namespace edgemt::rnn
