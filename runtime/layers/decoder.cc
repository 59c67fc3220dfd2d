#include "layers/decoder.h"

#include <cmath>
#include <cstring>
#include <initializer_list>

#include "core/parallel.h"
#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/embedding.h"
#include "kernels/layer_norm.h"
#include "layers/residual.h"

namespace edgemt {
namespace {

struct Heads {
  size_t d;
  size_t count;
  size_t dim;
  float scale;
};

Heads heads_of(const TransformerConfig& config) {
  const size_t d = config.d_model;
  const size_t dim = d / config.heads;
  return {d, config.heads, dim, 1.0f / std::sqrt(static_cast<float>(dim))};
}

// Self-attention of each row's single query over its cached positions.
// qkv: [R, 3d]; k_cache/v_cache: [R, T, d]; ctx: [R, d].
void self_attention(const RunContext& c, const DecoderStep& step, const float* qkv,
                    const float* k_cache, const float* v_cache, size_t max_target, float* ctx) {
  const Heads heads = heads_of(*c.config);
  Workspace& w = *c.workspace;
  auto task = [&](size_t item, size_t slot) {
    const size_t r = item / heads.count;
    const size_t h = item % heads.count;
    kernels::AttentionShape shape;
    shape.query_len = 1;
    shape.key_len = step.step + 1;
    shape.head_dim = heads.dim;
    shape.q_stride = 3 * heads.d;
    shape.k_stride = shape.v_stride = heads.d;
    shape.out_stride = heads.d;
    shape.scale = heads.scale;
    const size_t cache_row = step.row_slot[r] * max_target * heads.d + h * heads.dim;
    kernels::scaled_dot_product_attention(shape, qkv + r * 3 * heads.d + h * heads.dim,
                                          k_cache + cache_row, v_cache + cache_row,
                                          w.attention_scratch + slot * w.scratch_stride,
                                          ctx + r * heads.d + h * heads.dim);
  };
  parallel_for(c.pool, c.workers, step.rows * heads.count, task);
}

// Cross-attention of each row's query over its source's encoder rows.
// q: [R, d]; memory_kv: [Ns, 2d] (k | v); ctx: [R, d].
void cross_attention(const RunContext& c, const PackedSequences& sources, const DecoderStep& step,
                     const float* q, const float* memory_kv, float* ctx) {
  const Heads heads = heads_of(*c.config);
  Workspace& w = *c.workspace;
  auto task = [&](size_t item, size_t slot) {
    const size_t r = item / heads.count;
    const size_t h = item % heads.count;
    const size_t s = step.row_source[r];
    const size_t first = sources.offsets[s];
    kernels::AttentionShape shape;
    shape.query_len = 1;
    shape.key_len = sources.offsets[s + 1] - first;
    shape.head_dim = heads.dim;
    shape.q_stride = heads.d;
    shape.k_stride = shape.v_stride = 2 * heads.d;
    shape.out_stride = heads.d;
    shape.scale = heads.scale;
    const float* k = memory_kv + first * 2 * heads.d + h * heads.dim;
    kernels::scaled_dot_product_attention(shape, q + r * heads.d + h * heads.dim, k, k + heads.d,
                                          w.attention_scratch + slot * w.scratch_stride,
                                          ctx + r * heads.d + h * heads.dim);
  };
  parallel_for(c.pool, c.workers, step.rows * heads.count, task);
}

}  // namespace

Status run_decoder_step(const RunContext& c, const PackedSequences& sources,
                        const DecoderStep& step) {
  const TransformerConfig& config = *c.config;
  const TransformerWeights& weights = *c.weights;
  Workspace& w = *c.workspace;
  const size_t d = config.d_model;
  const size_t rows = step.rows;
  const float eps = config.layer_norm_eps;
  const NormPlacement placement = config.norm_placement;
  const size_t cache_len = w.max_target_len;

  // x [R, d] = E[token] * scale + PE[step]
  kernels::embed_tokens(weights.target_embedding.data, d, step.tokens, rows,
                        config.embedding_scale, weights.positions, step.step, 0, w.dec_x);

  for (size_t l = 0; l < config.decoder_layers; ++l) {
    const DecoderLayerWeights& layer = weights.decoder[l];
    float* k_cache = w.k_cache[l];
    float* v_cache = w.v_cache[l];

    // Masked self-attention: append this step's k, v to the cache.
    const float* in = sublayer_input(placement, layer.self_norm, eps, w.dec_x, rows, d, w.dec_norm);
    EDGEMT_RETURN_IF_ERROR(layer.self_qkv.run(in, rows, w.dec_qkv, c.pool));  // [R, 3d]
    for (size_t r = 0; r < rows; ++r) {
      const size_t at = (step.row_slot[r] * cache_len + step.step) * d;
      std::memcpy(k_cache + at, w.dec_qkv + r * 3 * d + d, d * sizeof(float));
      std::memcpy(v_cache + at, w.dec_qkv + r * 3 * d + 2 * d, d * sizeof(float));
    }
    self_attention(c, step, w.dec_qkv, k_cache, v_cache, cache_len, w.dec_ctx);
    EDGEMT_RETURN_IF_ERROR(layer.self_out.run(w.dec_ctx, rows, w.dec_out, c.pool));
    residual_step(placement, layer.self_norm, eps, w.dec_out, rows, d, w.dec_x);

    // Cross-attention over the encoder output.
    in = sublayer_input(placement, layer.cross_norm, eps, w.dec_x, rows, d, w.dec_norm);
    EDGEMT_RETURN_IF_ERROR(layer.cross_q.run(in, rows, w.dec_q, c.pool));  // [R, d]
    cross_attention(c, sources, step, w.dec_q, w.memory_kv[l], w.dec_ctx);
    EDGEMT_RETURN_IF_ERROR(layer.cross_out.run(w.dec_ctx, rows, w.dec_out, c.pool));
    residual_step(placement, layer.cross_norm, eps, w.dec_out, rows, d, w.dec_x);

    // Feed-forward.
    in = sublayer_input(placement, layer.ffn_norm, eps, w.dec_x, rows, d, w.dec_norm);
    EDGEMT_RETURN_IF_ERROR(layer.ffn_in.run(in, rows, w.dec_ffn, c.pool));  // [R, f]
    if (config.activation != Activation::kRelu) {
      kernels::apply_activation(config.activation, w.dec_ffn, rows * config.ffn_dim);
    }
    EDGEMT_RETURN_IF_ERROR(layer.ffn_out.run(w.dec_ffn, rows, w.dec_out, c.pool));
    residual_step(placement, layer.ffn_norm, eps, w.dec_out, rows, d, w.dec_x);
  }
  if (weights.decoder_final_norm.weight != nullptr) {
    kernels::layer_norm(w.dec_x, weights.decoder_final_norm.weight,
                        weights.decoder_final_norm.bias, rows, d, eps, w.dec_x);
  }
  return weights.output.run(w.dec_x, rows, w.logits, c.pool);  // [R, V]
}

void reorder_cache(const RunContext& c, size_t first_slot, size_t old_count,
                   const size_t* parent, size_t new_count, size_t positions) {
  Workspace& w = *c.workspace;
  const size_t d = c.config->d_model;
  const size_t slot_floats = w.max_target_len * d;
  const size_t bytes = positions * d * sizeof(float);
  float* scratch = w.reorder_scratch;  // [old_count, T, d]
  for (size_t l = 0; l < c.config->decoder_layers; ++l) {
    for (float* cache : {w.k_cache[l], w.v_cache[l]}) {
      float* slots = cache + first_slot * slot_floats;
      for (size_t j = 0; j < old_count; ++j) {
        std::memcpy(scratch + j * slot_floats, slots + j * slot_floats, bytes);
      }
      for (size_t j = 0; j < new_count; ++j) {
        std::memcpy(slots + j * slot_floats, scratch + parent[j] * slot_floats, bytes);
      }
    }
  }
}

}  // namespace edgemt
