#include "models/transformer/config.h"

#include <cmath>
#include <cstdio>

#include "edgemt/limits.h"
#include "models/config_check.h"
#include "models/families.h"

namespace edgemt::transformer {

const char* norm_placement_name(NormPlacement placement) {
  switch (placement) {
    case NormPlacement::kPostNorm: return "post-norm";
    case NormPlacement::kPreNorm: return "pre-norm";
  }
  return "unknown";
}

const TransformerConfig& transformer_config(const Model& model) {
  return family_config(model).as<TransformerConfig>();
}

Status verify_transformer_config(const TransformerConfig& c) {
  EDGEMT_RETURN_IF_ERROR(check_config_range("encoder_layers", c.encoder_layers, kMaxLayersPerStack));
  EDGEMT_RETURN_IF_ERROR(check_config_range("decoder_layers", c.decoder_layers, kMaxLayersPerStack));
  EDGEMT_RETURN_IF_ERROR(check_config_range("d_model", c.d_model, kMaxDModel));
  EDGEMT_RETURN_IF_ERROR(check_config_range("heads", c.heads, c.d_model));
  if (c.d_model % c.heads != 0) {
    return Status::error(StatusCode::kInvalidModel, "config.heads = %u does not divide d_model = %u",
                         c.heads, c.d_model);
  }
  EDGEMT_RETURN_IF_ERROR(check_config_range("ffn_dim", c.ffn_dim, kMaxFfnDim));
  EDGEMT_RETURN_IF_ERROR(check_config_range("vocab_size", c.vocab_size, kMaxVocabSize));
  EDGEMT_RETURN_IF_ERROR(check_config_range("max_positions", c.max_positions, kMaxPositions));
  if (has_ssru_decoder(c) && c.norm_placement != NormPlacement::kPostNorm) {
    return Status::error(StatusCode::kInvalidModel,
                         "config.decoder_autoregression = SSRU needs a post-norm decoder");
  }
  if (c.raw_decoder_self_memory && c.norm_placement != NormPlacement::kPreNorm) {
    return Status::error(StatusCode::kInvalidModel,
                         "config.raw_decoder_self_memory needs a pre-norm decoder");
  }
  if (c.source_vocab_size != 0) {
    EDGEMT_RETURN_IF_ERROR(check_config_range("source_vocab_size", c.source_vocab_size, kMaxVocabSize));
    if (c.shared_embeddings && c.source_vocab_size != c.vocab_size) {
      return Status::error(StatusCode::kInvalidModel,
                           "config.shared_embeddings needs source_vocab_size = vocab_size (%u and "
                           "%u)",
                           c.source_vocab_size, c.vocab_size);
    }
  }
  if (!std::isfinite(c.layer_norm_eps) || !(c.layer_norm_eps > 0.0f)) {
    return Status::error(StatusCode::kInvalidModel,
                         "config.layer_norm_eps = %g must be finite and greater than 0",
                         static_cast<double>(c.layer_norm_eps));
  }
  if (!std::isfinite(c.embedding_scale)) {
    return Status::error(StatusCode::kInvalidModel, "config.embedding_scale = %g is not finite",
                         static_cast<double>(c.embedding_scale));
  }
  return Status::ok();
}

void describe_config(const TransformerConfig& c, char* out, size_t size) {
  std::snprintf(
      out, size,
      "  layers           %u encoder, %u decoder%s\n"
      "  d_model          %u\n"
      "  heads            %u (head dim %u)\n"
      "  ffn              %u, %s\n"
      "  norm             %s, eps %g, final norm: encoder %s, decoder %s\n"
      "  embeddings       scale %g, %s source/target, output %s, output bias %s\n"
      "  vocabulary       %u source, %u target\n"
      "  decoder start    %s%s\n",
      c.encoder_layers, c.decoder_layers, has_ssru_decoder(c) ? " (SSRU, Marian)" : "", c.d_model, c.heads, c.heads ? c.d_model / c.heads : 0,
      c.ffn_dim, activation_name(c.activation), norm_placement_name(c.norm_placement),
      static_cast<double>(c.layer_norm_eps), c.encoder_final_norm ? "yes" : "no",
      c.decoder_final_norm ? "yes" : "no", static_cast<double>(c.embedding_scale),
      c.shared_embeddings ? "shared" : "separate", c.tied_output ? "tied" : "untied",
      c.output_bias ? "yes" : "no", source_vocab_size(c), c.vocab_size,
      c.zero_decoder_start ? "zero vector" : "embedding of decoder_start",
      c.raw_decoder_self_memory ? "; self-attention memory from raw inputs (Marian)" : "");
}

}  // namespace edgemt::transformer
