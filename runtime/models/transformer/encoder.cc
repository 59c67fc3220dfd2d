#include "models/transformer/encoder.h"

#include <cmath>

#include "core/parallel.h"
#include "core/profile.h"
#include "kernels/attention.h"
#include "kernels/embedding.h"
#include "kernels/layer_norm.h"
#include "models/transformer/activation_step.h"
#include "models/transformer/residual.h"

namespace edgemt::transformer {
namespace {

// Multi-head self-attention of every sequence over its own rows.
// qkv: [rows, 3d] (q | k | v, heads side by side); ctx: [rows, d].
void self_attention(const RunContext& c, const PackedSequences& seqs, const float* qkv,
                    float* ctx) {
  const size_t d = c.config->d_model;
  const size_t heads = c.config->heads;
  const size_t head_dim = d / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  Workspace& w = *c.workspace;
  auto task = [&](size_t item, size_t slot) {
    const size_t s = item / heads;
    const size_t h = item % heads;
    const size_t first = seqs.offsets[s];
    const size_t len = seqs.offsets[s + 1] - first;
    kernels::AttentionShape shape;
    shape.query_len = len;
    shape.key_len = len;
    shape.head_dim = head_dim;
    shape.q_stride = shape.k_stride = shape.v_stride = 3 * d;
    shape.out_stride = d;
    shape.scale = scale;
    const float* q = qkv + first * 3 * d + h * head_dim;
    kernels::scaled_dot_product_attention(shape, q, q + d, q + 2 * d,
                                          w.enc_attention_scratch + slot * w.enc_scratch_stride,
                                          ctx + first * d + h * head_dim);
  };
  // Work per item estimated at the mean sequence length.
  const size_t mean_len = seqs.offsets[seqs.count] / (seqs.count ? seqs.count : 1);
  parallel_for(c.parallel, seqs.count * heads,
               kernels::attention_nanoseconds(mean_len, mean_len, head_dim), task);
}

}  // namespace

Status run_encoder(const RunContext& c, const int32_t* ids, const PackedSequences& seqs) {
  ProfileScope timed(c.profile, ProfilePart::kEncoder);  // as a whole; parts are decoder-only
  const TransformerConfig& config = *c.config;
  const TransformerWeights& weights = *c.weights;
  Workspace& w = *c.workspace;
  const size_t d = config.d_model;
  const size_t rows = seqs.offsets[seqs.count];
  const float eps = config.layer_norm_eps;
  const NormPlacement placement = config.norm_placement;
  // y [rows, out] = x [rows, in] · Wᵀ + b
  auto linear = [&](const Linear& layer, const float* x, float* y) {
    return layer.run(x, rows, y, c.parallel, &w.enc_linear_scratch);
  };

  // x [rows, d] = E[ids] * scale + PE[position within its sequence]
  for (size_t s = 0; s < seqs.count; ++s) {
    const size_t first = seqs.offsets[s];
    kernels::embed_tokens(weights.source_embedding, ids + first, seqs.offsets[s + 1] - first,
                          config.embedding_scale, weights.positions, 0, 1, w.enc_x + first * d);
  }

  for (size_t l = 0; l < config.encoder_layers; ++l) {
    const EncoderLayerWeights& layer = weights.encoder[l];
    // Self-attention sub-layer.
    const float* in = sublayer_input(c.parallel, placement, layer.self_norm, eps, w.enc_x, rows, d, w.enc_norm);
    EDGEMT_RETURN_IF_ERROR(linear(layer.self_qkv, in, w.enc_qkv));  // [rows, 3d]
    self_attention(c, seqs, w.enc_qkv, w.enc_ctx);                   // [rows, d]
    EDGEMT_RETURN_IF_ERROR(linear(layer.self_out, w.enc_ctx, w.enc_out));
    residual_step(c.parallel, placement, layer.self_norm, eps, w.enc_out, rows, d, w.enc_x);
    // Feed-forward sub-layer.
    in = sublayer_input(c.parallel, placement, layer.ffn_norm, eps, w.enc_x, rows, d, w.enc_norm);
    EDGEMT_RETURN_IF_ERROR(linear(layer.ffn_in, in, w.enc_ffn));  // [rows, f]
    if (config.activation != Activation::kRelu) {  // ReLU is fused into the GEMM
      activation_step(c.parallel, config.activation, w.enc_ffn, rows, config.ffn_dim);
    }
    EDGEMT_RETURN_IF_ERROR(linear(layer.ffn_out, w.enc_ffn, w.enc_out));
    residual_step(c.parallel, placement, layer.ffn_norm, eps, w.enc_out, rows, d, w.enc_x);
  }
  if (weights.encoder_final_norm.weight != nullptr) {
    kernels::layer_norm(w.enc_x, weights.encoder_final_norm.weight,
                        weights.encoder_final_norm.bias, rows, d, eps, w.enc_x);
  }
  // Cross-attention keys and values, once per source: [rows, 2d] per layer.
  for (size_t l = 0; l < config.decoder_layers; ++l) {
    EDGEMT_RETURN_IF_ERROR(linear(weights.decoder[l].cross_kv, w.enc_x, w.memory_kv[l]));
  }
  return Status::ok();
}

}  // namespace edgemt::transformer
