#include "models/transformer/config_schema.h"

namespace edgemt {

Status read_config(const format::TransformerConfig& in, TransformerConfig* out) {
  const auto activation = static_cast<int>(in.activation());
  if (activation < static_cast<int>(format::Activation::MIN) ||
      activation > static_cast<int>(format::Activation::MAX)) {
    return Status::error(StatusCode::kUnsupported, "activation %d is not supported", activation);
  }
  const auto placement = static_cast<int>(in.norm_placement());
  if (placement < static_cast<int>(format::NormPlacement::MIN) ||
      placement > static_cast<int>(format::NormPlacement::MAX)) {
    return Status::error(StatusCode::kUnsupported, "norm placement %d is not supported",
                         placement);
  }
  out->encoder_layers = in.encoder_layers();
  out->decoder_layers = in.decoder_layers();
  out->d_model = in.d_model();
  out->heads = in.heads();
  out->ffn_dim = in.ffn_dim();
  out->activation = static_cast<Activation>(activation);
  out->norm_placement = static_cast<NormPlacement>(placement);
  out->layer_norm_eps = in.layer_norm_eps();
  out->encoder_final_norm = in.encoder_final_norm();
  out->decoder_final_norm = in.decoder_final_norm();
  out->embedding_scale = in.embedding_scale();
  out->tied_output = in.tied_output();
  out->output_bias = in.output_bias();
  out->shared_embeddings = in.shared_embeddings();
  out->vocab_size = in.vocab_size();
  out->max_positions = in.max_positions();
  out->source_vocab_size = in.source_vocab_size();
  out->zero_decoder_start = in.zero_decoder_start();
  out->raw_decoder_self_memory = in.raw_decoder_self_memory();
  return verify_transformer_config(*out);
}

}  // namespace edgemt
