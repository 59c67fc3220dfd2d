#include "models/transformer/config_schema.h"

namespace edgemt::transformer {

Status read_config(const format::TransformerConfig& in, TransformerConfig* out) {
  if (!read_enum(in.activation(), &out->activation)) {
    return Status::error(StatusCode::kUnsupported, "activation %d is not supported",
                         static_cast<int>(in.activation()));
  }
  if (!read_enum(in.norm_placement(), &out->norm_placement)) {
    return Status::error(StatusCode::kUnsupported, "norm placement %d is not supported",
                         static_cast<int>(in.norm_placement()));
  }
  if (!read_enum(in.decoder_autoregression(), &out->decoder_autoregression)) {
    return Status::error(StatusCode::kUnsupported, "decoder autoregression %d is not supported",
                         static_cast<int>(in.decoder_autoregression()));
  }
  EDGEMT_COPY_FIELD(encoder_layers) EDGEMT_COPY_FIELD(decoder_layers) EDGEMT_COPY_FIELD(d_model)
  EDGEMT_COPY_FIELD(heads) EDGEMT_COPY_FIELD(ffn_dim) EDGEMT_COPY_FIELD(layer_norm_eps)
  EDGEMT_COPY_FIELD(encoder_final_norm) EDGEMT_COPY_FIELD(decoder_final_norm)
  EDGEMT_COPY_FIELD(embedding_scale) EDGEMT_COPY_FIELD(tied_output) EDGEMT_COPY_FIELD(output_bias)
  EDGEMT_COPY_FIELD(shared_embeddings) EDGEMT_COPY_FIELD(vocab_size)
  EDGEMT_COPY_FIELD(max_positions) EDGEMT_COPY_FIELD(source_vocab_size)
  EDGEMT_COPY_FIELD(zero_decoder_start) EDGEMT_COPY_FIELD(raw_decoder_self_memory)
  return verify_transformer_config(*out);
}

}  // namespace edgemt::transformer
