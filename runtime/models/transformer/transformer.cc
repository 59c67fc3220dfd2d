#include "models/transformer/transformer.h"

#include "models/family_kit.h"
#include "models/transformer/config_schema.h"
#include "models/transformer/tensor_layout.h"
#include "models/transformer/config.h"
#include "models/transformer/decoder.h"
#include "models/transformer/encoder.h"
#include "models/transformer/weights.h"
#include "models/transformer/workspace.h"

namespace edgemt::transformer {

// What the family kit (models/family_kit.h) asks of the Transformer family
// besides its encoder and decoder.

void plan_workspace(const TransformerConfig& config, const TransformerWeights& weights,
                    const RunShape& run, Arena* arena, Workspace* out) {
  WorkspaceShape shape;
  static_cast<RunShape&>(shape) = run;
  shape.d_model = config.d_model;
  shape.ffn_dim = config.ffn_dim;
  shape.vocab = config.vocab_size;
  shape.encoder_layers = config.encoder_layers;
  shape.decoder_layers = config.decoder_layers;
  shape.heads = config.heads;
  shape.int8 = weights.int8;
  shape.f16 = weights.f16_native;
  shape.raw_self_memory = config.raw_decoder_self_memory;
  shape.ssru = has_ssru_decoder(config);
  shape.self_kv_again = !shape.ssru && config.decoder_layers > 0 &&
                        weights.decoder[0].self_qkv.int8_tensor_range();
  plan_workspace(shape, arena, out);
}

const float* head_input(const RunContext& c) { return c.workspace->dec_x; }

const float* attention_weights(const Workspace& workspace, size_t* stride) {
  *stride = workspace.max_source_len;
  return workspace.cross_weights;
}

Status check_attention_choice(const TransformerConfig& config, int layer, int head) {
  const int layers = static_cast<int>(config.decoder_layers);
  const int heads = static_cast<int>(config.heads);
  if (layer < -1 || layer >= layers || head < -1 || head >= heads) {
    return Status::error(StatusCode::kInvalidArgument,
                         "layer %d, head %d asked; the decoder has layers 0..%d and heads 0..%d "
                         "(-1: the last layer; the mean over heads)", layer, head, layers - 1, heads - 1);
  }
  return Status::ok();
}

// ReLU feed-forward blocks' second products skip zero inputs when their
// kernels can (weights.cc): every such Linear is alike, so the first says.
// Short: `edgemt inspect`'s summary fits 40 lines.
const char* own_kernels(const TransformerConfig& config, const TransformerWeights& weights) {
  const bool skips = (config.encoder_layers > 0 && weights.encoder[0].ffn_out.sparse_input()) ||
                     (config.decoder_layers > 0 && weights.decoder[0].ffn_out.sparse_input());
  return skips ? "ReLU zeros skipped" : nullptr;
}

using TransformerModel = FamilyModel<TransformerConfig, TransformerWeights, Workspace, RunContext>;

const Family kFamily =
    family_record<TransformerConfig, format::TransformerConfig,
                  &format::Model::family_config_as_TransformerConfig, FamilyId::TransformerConfig,
                  TransformerModel>("transformer", /*int8_float_tables=*/true);

}  // namespace edgemt::transformer
