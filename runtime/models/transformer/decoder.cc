#include "models/transformer/decoder.h"

#include <cmath>
#include <cstring>
#include <initializer_list>

#include "core/parallel.h"
#include "core/profile.h"
#include "kernels/attention.h"
#include "kernels/column_gather.h"
#include "kernels/embedding.h"
#include "kernels/layer_norm.h"
#include "kernels/ssru.h"
#include "models/transformer/activation_step.h"
#include "models/transformer/residual.h"

namespace edgemt::transformer {
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
// qkv: [R, 3d]; k_cache/v_cache: [R·T, d], row p of the hypothesis in slot
// r at offset cache_rows[r·T + p]; ctx: [R, d].
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
    shape.out_stride = heads.d;
    shape.scale = heads.scale;
    shape.key_offsets = w.cache_rows + step.row_slot[r] * max_target;
    const size_t head = h * heads.dim;
    kernels::scaled_dot_product_attention(shape, qkv + r * 3 * heads.d + head, k_cache + head,
                                          v_cache + head,
                                          w.dec_attention_scratch + slot * w.dec_scratch_stride,
                                          ctx + r * heads.d + h * heads.dim);
  };
  parallel_for(c.parallel, step.rows * heads.count,
               kernels::attention_nanoseconds(1, step.step + 1, heads.dim), task);
}

// Cross-attention of each row's query over its source's encoder rows.
// q: [R, d]; memory_kv: [Ns, 2d] (k | v); ctx: [R, d]. With keep_heads
// ([R, heads, S], S = w.max_source_len) each head's probabilities are kept
// there too (the layer whose weights the caller asked for).
void cross_attention(const RunContext& c, const PackedSequences& sources, const DecoderStep& step,
                     const float* q, const float* memory_kv, float* ctx, float* keep_heads) {
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
    float* probs = w.dec_attention_scratch + slot * w.dec_scratch_stride;  // [key_len]
    kernels::scaled_dot_product_attention(shape, q + r * heads.d + h * heads.dim, k, k + heads.d,
                                          probs, ctx + r * heads.d + h * heads.dim);
    if (keep_heads != nullptr) {
      std::memcpy(keep_heads + item * w.max_source_len, probs, shape.key_len * sizeof(float));
    }
  };
  // Work per item estimated at the mean source length.
  const size_t mean_source = sources.offsets[sources.count] / (sources.count ? sources.count : 1);
  parallel_for(c.parallel, step.rows * heads.count,
               kernels::attention_nanoseconds(1, mean_source, heads.dim), task);
}

// The weights the caller asked for, from every head's [R, heads, S]:
// the chosen head's row, or the mean over heads (PyTorch's
// average_attn_weights: the sum over heads in order, divided by their
// number). out: [R, S]; row r's first n floats, n its source's length.
void keep_cross_weights(const RunContext& c, const PackedSequences& sources, const DecoderStep& step) {
  Workspace& w = *c.workspace;
  const size_t head_count = c.config->heads;
  const size_t S = w.max_source_len;
  for (size_t r = 0; r < step.rows; ++r) {
    const size_t s = step.row_source[r];
    const size_t n = sources.offsets[s + 1] - sources.offsets[s];
    const float* heads = w.cross_weights_heads + r * head_count * S;
    float* out = w.cross_weights + r * S;
    if (w.attention_head >= 0) {
      std::memcpy(out, heads + static_cast<size_t>(w.attention_head) * S, n * sizeof(float));
      continue;
    }
    for (size_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (size_t h = 0; h < head_count; ++h) sum += heads[h * S + j];
      out[j] = sum / static_cast<float>(head_count);
    }
  }
}

// y [rows, out] = linear(x), timed as `part`.
Status run_linear(const RunContext& c, ProfilePart part, const Linear& linear, const float* x,
                  size_t rows, float* y) {
  ProfileScope timed(c.profile, part);
  return linear.run(x, rows, y, c.parallel, &c.workspace->dec_linear_scratch);
}

const float* timed_sublayer_input(const RunContext& c, const NormWeights& norm, const float* x,
                                  size_t rows, float* scratch) {
  ProfileScope timed(c.profile, ProfilePart::kLayerNorm);
  return sublayer_input(c.parallel, c.config->norm_placement, norm, c.config->layer_norm_eps, x, rows,
                        c.config->d_model, scratch);
}

void timed_residual_step(const RunContext& c, const NormWeights& norm, const float* sublayer_out,
                         size_t rows, float* x) {
  ProfileScope timed(c.profile, ProfilePart::kLayerNorm);
  residual_step(c.parallel, c.config->norm_placement, norm, c.config->layer_norm_eps, sublayer_out, rows,
                c.config->d_model, x);
}

// The Q and K|V columns of a fused int8 Q|K|V matrix [d -> 3d] as views of
// its pack (kernels::column_range), so Marian's int8 self-attention computes
// no column it does not use; both without columns where the matrix is not
// int8 or d is not whole blocks of the pack (then the fused product runs).
struct QkvParts {
  kernels::int8::PackedWeights q;   // columns [0, d)
  kernels::int8::PackedWeights kv;  // columns [d, 3d)
};

QkvParts qkv_parts(const Linear& qkv, size_t d) {
  if (!qkv.is_int8()) return QkvParts{};
  const kernels::int8::PackedWeights& pack = qkv.int8_linear().packed();
  QkvParts parts{kernels::column_range(pack, 0, d), kernels::column_range(pack, d, 2 * d)};
  if (parts.q.columns == 0 || parts.kv.columns == 0) return QkvParts{};
  return parts;
}

// Marian's per-tensor int8 self-attention (Workspace::self_memory): keeps
// this step's self-attention inputs `memory` [R, d] beside the caches, then
// multiplies every position 0..step of the step's hypotheses again in one
// product (one quantization range over them all, as Marian's) and writes
// their k, v into the caches, rows as cache_rows gives them. With `parts`
// only the K|V columns are computed (into memory_qkv's [d, 3d)).
Status self_kv_again(const RunContext& c, const DecoderStep& step, const Linear& qkv,
                     const QkvParts& parts, const float* memory, float* self_memory,
                     float* k_cache, float* v_cache) {
  Workspace& w = *c.workspace;
  const size_t d = c.config->d_model;
  const size_t rows = step.rows;
  const size_t cache_len = w.max_target_len;
  const size_t positions = step.step + 1;
  {
    ProfileScope timed(c.profile, ProfilePart::kDecoderState);
    for (size_t r = 0; r < rows; ++r) {
      const size_t* history = w.cache_rows + step.row_slot[r] * cache_len;
      std::memcpy(self_memory + history[step.step], memory + r * d, d * sizeof(float));
      for (size_t p = 0; p < positions; ++p) {  // [r, p] rows: hypothesis by hypothesis
        std::memcpy(w.memory_rows + (r * positions + p) * d, self_memory + history[p], d * sizeof(float));
      }
    }
  }
  {
    ProfileScope timed(c.profile, ProfilePart::kAttentionGemm);
    if (parts.kv.columns != 0) {  // [R·T, 3d], k | v at [d, 3d)
      EDGEMT_RETURN_IF_ERROR(qkv.int8_linear().run_columns(w.memory_rows, rows * positions,
                                                           w.memory_qkv + d, c.parallel,
                                                           w.memory_scratch, parts.kv, 3 * d));
    } else {
      EDGEMT_RETURN_IF_ERROR(qkv.run(w.memory_rows, rows * positions, w.memory_qkv, c.parallel,
                                     &w.memory_scratch));
    }
  }
  ProfileScope timed(c.profile, ProfilePart::kDecoderState);
  for (size_t r = 0; r < rows; ++r) {
    const size_t* history = w.cache_rows + step.row_slot[r] * cache_len;
    for (size_t p = 0; p < positions; ++p) {
      // Hypotheses that share a prefix share its rows: both write the same k, v.
      const float* kv = w.memory_qkv + (r * positions + p) * 3 * d;
      std::memcpy(k_cache + history[p], kv + d, d * sizeof(float));
      std::memcpy(v_cache + history[p], kv + 2 * d, d * sizeof(float));
    }
  }
  return Status::ok();
}

// The masked self-attention block: appends this step's k, v to the layer's
// cache (k_cache, v_cache: [R·T rows, d], workspace.h) and attends over
// positions 0..step; the residual and norm update w.dec_x [R, d].
// self_memory: the layer's self-attention inputs where every step computes
// k, v again (self_kv_again), else nullptr.
Status self_attention_block(const RunContext& c, const DecoderStep& step,
                            const DecoderLayerWeights& layer, float* k_cache, float* v_cache,
                            float* self_memory) {
  const TransformerConfig& config = *c.config;
  Workspace& w = *c.workspace;
  const size_t d = config.d_model;
  const size_t rows = step.rows;
  const size_t cache_len = w.max_target_len;
  constexpr ProfilePart kGemm = ProfilePart::kAttentionGemm;
  // Masked self-attention: append this step's k, v to the cache.
  const float* in = timed_sublayer_input(c, layer.self_norm, w.dec_x, rows, w.dec_norm);
  // Where every step computes k, v again, this step's are among them: after
  // the first step its own product needs only q.
  const bool again = self_memory != nullptr && step.step > 0;
  const QkvParts parts = again ? qkv_parts(layer.self_qkv, d) : QkvParts{};
  if (parts.q.columns != 0) {
    ProfileScope timed(c.profile, kGemm);  // q into dec_qkv's [0, d)
    EDGEMT_RETURN_IF_ERROR(layer.self_qkv.int8_linear().run_columns(
        in, rows, w.dec_qkv, c.parallel, w.dec_linear_scratch, parts.q, 3 * d));
  } else {
    EDGEMT_RETURN_IF_ERROR(run_linear(c, kGemm, layer.self_qkv, in, rows, w.dec_qkv));  // [R, 3d]
  }
  // Marian's pre-norm decoding keeps the raw layer inputs as the
  // self-attention memory: the cache gets k, v of the un-normalized x
  // (the first step still attends to its normalized k, v, below). Where
  // every step computes k, v again, it does so from those inputs.
  const float* memory = w.dec_qkv;  // [R, 3d], k | v at [d, 3d)
  if (config.raw_decoder_self_memory && self_memory == nullptr) {
    EDGEMT_RETURN_IF_ERROR(run_linear(c, kGemm, layer.self_qkv, w.dec_x, rows, w.dec_qkv_raw));
    memory = w.dec_qkv_raw;
  }
  const float* first = step.step == 0 ? w.dec_qkv : memory;
  const float* kept = config.raw_decoder_self_memory ? w.dec_x : in;  // self_memory's rows
  if (again) {
    EDGEMT_RETURN_IF_ERROR(
        self_kv_again(c, step, layer.self_qkv, parts, kept, self_memory, k_cache, v_cache));
  }
  {
    ProfileScope timed(c.profile, ProfilePart::kDecoderState);
    for (size_t r = 0; r < rows && !again; ++r) {
      const size_t at = w.cache_rows[step.row_slot[r] * cache_len + step.step];
      std::memcpy(k_cache + at, first + r * 3 * d + d, d * sizeof(float));
      std::memcpy(v_cache + at, first + r * 3 * d + 2 * d, d * sizeof(float));
      // Position 0 alone: its k, v are already those of its own range.
      if (self_memory != nullptr) std::memcpy(self_memory + at, kept + r * d, d * sizeof(float));
    }
    self_attention(c, step, w.dec_qkv, k_cache, v_cache, cache_len, w.dec_ctx);
    if (memory != first) {  // step 0: keep the raw k, v for the steps after
      for (size_t r = 0; r < rows; ++r) {
        const size_t at = w.cache_rows[step.row_slot[r] * cache_len + step.step];
        std::memcpy(k_cache + at, memory + r * 3 * d + d, d * sizeof(float));
        std::memcpy(v_cache + at, memory + r * 3 * d + 2 * d, d * sizeof(float));
      }
    }
  }
  EDGEMT_RETURN_IF_ERROR(run_linear(c, kGemm, layer.self_out, w.dec_ctx, rows, w.dec_out));
  timed_residual_step(c, layer.self_norm, w.dec_out, rows, w.dec_x);
  return Status::ok();
}

// Marian's SSRU block (post-norm; schema/edgemt.fbs DecoderAutoregression):
// gates [R, 2d] = x [Wᵀ | Wfᵀ] + [0 | bf]; per hypothesis (its state row
// c: its slot's row of state [R slots, d], 0 before the first step)
//   f = sigmoid(gates[d + i]),  c = f*c + (1 - f)*gates[i],  h = relu(c)
// (Marian's HighwayForward order), then x = norm(x + h).
Status ssru_block(const RunContext& c, const DecoderStep& step, const DecoderLayerWeights& layer,
                  float* state) {
  Workspace& w = *c.workspace;
  const size_t d = c.config->d_model;
  const size_t rows = step.rows;
  EDGEMT_RETURN_IF_ERROR(
      run_linear(c, ProfilePart::kAttentionGemm, layer.ssru_gates, w.dec_x, rows, w.dec_gates));
  {
    ProfileScope timed(c.profile, ProfilePart::kDecoderState);
    for (size_t r = 0; r < rows; ++r) {
      kernels::ssru_cell(w.dec_gates + r * 2 * d, d, step.step == 0, state + step.row_slot[r] * d,
                         w.dec_out + r * d);
    }
  }
  timed_residual_step(c, layer.ssru_norm, w.dec_out, rows, w.dec_x);
  return Status::ok();
}

}  // namespace

// The step up to the decoder's last hidden state: workspace->dec_x [R, d]
// (callers time the whole step as kDecoderStep).
Status run_decoder_layers(const RunContext& c, const PackedSequences& sources,
                          const DecoderStep& step) {
  const TransformerConfig& config = *c.config;
  const TransformerWeights& weights = *c.weights;
  Workspace& w = *c.workspace;
  const size_t d = config.d_model;
  const size_t rows = step.rows;
  const size_t cache_len = w.max_target_len;
  constexpr ProfilePart kGemm = ProfilePart::kAttentionGemm;
  constexpr ProfilePart kFfn = ProfilePart::kFeedForwardGemm;

  {  // x [R, d] = E[token] * scale + PE[step]
    ProfileScope timed(c.profile, ProfilePart::kEmbedding);
    if (step.step == 0 && config.zero_decoder_start) {
      // Marian starts from a zero vector: x = 0 * scale + PE[0] = PE[0].
      for (size_t r = 0; r < rows; ++r) {
        std::memcpy(w.dec_x + r * d, weights.positions, d * sizeof(float));
      }
    } else {
      kernels::embed_tokens(weights.target_embedding, step.tokens, rows, config.embedding_scale,
                            weights.positions, step.step, 0, w.dec_x);
    }
  }

  // This step's cache row of each hypothesis, the next free ones
  // (workspace.h): the same offset in every layer's cache (they share one
  // layout), so handed out once per step. Every row of a step is at the
  // same step, and a decode's first step starts from row 0.
  if (step.step == 0) w.next_cache_row = 0;
  if (!has_ssru_decoder(config)) {  // SSRU decoders cache no positions
    for (size_t r = 0; r < rows; ++r) {
      w.cache_rows[step.row_slot[r] * cache_len + step.step] = (w.next_cache_row++) * d;
    }
  }
  for (size_t l = 0; l < config.decoder_layers; ++l) {
    const DecoderLayerWeights& layer = weights.decoder[l];
    const float* in = nullptr;
    if (has_ssru_decoder(config)) {
      EDGEMT_RETURN_IF_ERROR(ssru_block(c, step, layer, w.ssru_state[l]));
    } else {
      EDGEMT_RETURN_IF_ERROR(
          self_attention_block(c, step, layer, w.k_cache[l], w.v_cache[l], w.self_memory[l]));
    }

    // Cross-attention over the encoder output.
    in = timed_sublayer_input(c, layer.cross_norm, w.dec_x, rows, w.dec_norm);
    EDGEMT_RETURN_IF_ERROR(run_linear(c, kGemm, layer.cross_q, in, rows, w.dec_q));  // [R, d]
    {
      ProfileScope timed(c.profile, ProfilePart::kSourceAttention);
      const bool keep = step.attention && w.cross_weights != nullptr && l == w.attention_layer;
      cross_attention(c, sources, step, w.dec_q, w.memory_kv[l], w.dec_ctx,
                      keep ? w.cross_weights_heads : nullptr);
      if (keep) keep_cross_weights(c, sources, step);
    }
    EDGEMT_RETURN_IF_ERROR(run_linear(c, kGemm, layer.cross_out, w.dec_ctx, rows, w.dec_out));
    timed_residual_step(c, layer.cross_norm, w.dec_out, rows, w.dec_x);

    // Feed-forward.
    in = timed_sublayer_input(c, layer.ffn_norm, w.dec_x, rows, w.dec_norm);
    EDGEMT_RETURN_IF_ERROR(run_linear(c, kFfn, layer.ffn_in, in, rows, w.dec_ffn));  // [R, f]
    if (config.activation != Activation::kRelu) {
      activation_step(c.parallel, config.activation, w.dec_ffn, rows, config.ffn_dim);
    }
    EDGEMT_RETURN_IF_ERROR(run_linear(c, kFfn, layer.ffn_out, w.dec_ffn, rows, w.dec_out));
    timed_residual_step(c, layer.ffn_norm, w.dec_out, rows, w.dec_x);
  }
  if (weights.decoder_final_norm.weight != nullptr) {
    ProfileScope timed(c.profile, ProfilePart::kLayerNorm);
    kernels::layer_norm(w.dec_x, weights.decoder_final_norm.weight,
                        weights.decoder_final_norm.bias, rows, d, config.layer_norm_eps, w.dec_x);
  }
  return Status::ok();
}


void reorder_state(const RunContext& c, size_t first_slot, size_t old_count,
                   const size_t* parent, size_t new_count, size_t positions) {
  Workspace& w = *c.workspace;
  if (has_ssru_decoder(*c.config)) {
    // SSRU states are the hypotheses' whole history: their rows move.
    const size_t d = c.config->d_model;
    for (size_t l = 0; l < c.config->decoder_layers; ++l) {
      float* rows = w.ssru_state[l] + first_slot * d;  // [old_count, d] of this sentence
      std::memcpy(w.ssru_state_scratch, rows, old_count * d * sizeof(float));
      for (size_t j = 0; j < new_count; ++j) {
        std::memcpy(rows + j * d, w.ssru_state_scratch + parent[j] * d, d * sizeof(float));
      }
    }
    return;
  }
  // Hypothesis j of the sentence takes over its parent's row offsets for
  // positions [0, positions); the cached k, v stay where they were written.
  const size_t T = w.max_target_len;
  size_t* slots = w.cache_rows + first_slot * T;  // [old_count, T] of this sentence
  size_t* scratch = w.cache_rows_scratch;         // [old_count, T]
  const size_t bytes = positions * sizeof(size_t);
  for (size_t j = 0; j < old_count; ++j) std::memcpy(scratch + j * T, slots + j * T, bytes);
  for (size_t j = 0; j < new_count; ++j) std::memcpy(slots + j * T, scratch + parent[j] * T, bytes);
}

}  // namespace edgemt::transformer
