#include "models/transformer/workspace.h"

#include <algorithm>

#include "layers/unpacked_f32_linear.h"

namespace edgemt::transformer {

void plan_workspace(const WorkspaceShape& s, Arena* arena, Workspace* w) {
  using namespace run_step;
  using namespace encoder_steps;
  const size_t d = s.d_model;
  const size_t ns = s.source_rows;
  w->enc_x = arena->allocate<float>(ns * d, {kEmbed, kCrossKv});
  w->enc_qkv = arena->allocate<float>(ns * 3 * d, {kAttnQkv, kAttnContext});
  w->enc_ctx = arena->allocate<float>(ns * d, {kAttnContext, kAttnOut});
  w->enc_out = arena->allocate<float>(ns * d, {kAttnOut, kFfnOut});
  w->enc_norm = arena->allocate<float>(ns * d, {kAttnNorm, kFfnIn});
  w->enc_ffn = arena->allocate<float>(ns * s.ffn_dim, {kFfnIn, kFfnOut});
  for (size_t l = 0; l < s.decoder_layers; ++l) {
    w->memory_kv[l] = arena->allocate<float>(ns * 2 * d, {kCrossKv, kDecodeSearch});
  }
  for (size_t l = 0; l < s.decoder_layers; ++l) {
    if (s.ssru) {  // one state row per slot, not T cached positions
      w->ssru_state[l] = arena->allocate<float>(s.rows * d, kWholeDecode);
      continue;
    }
    w->k_cache[l] = arena->allocate<float>(s.rows * s.max_target_len * d, kWholeDecode);
    w->v_cache[l] = arena->allocate<float>(s.rows * s.max_target_len * d, kWholeDecode);
    if (s.self_kv_again) {
      w->self_memory[l] = arena->allocate<float>(s.rows * s.max_target_len * d, kWholeDecode);
    }
  }
  if (s.self_kv_again && !s.ssru) {
    const size_t positions = s.rows * s.max_target_len;
    w->memory_rows = arena->allocate<float>(positions * d, {kDecodeLayers, kDecodeLayers});
    w->memory_qkv = arena->allocate<float>(positions * 3 * d, {kDecodeLayers, kDecodeLayers});
    plan_linear_scratch(positions, d, 3 * d, s.int8, s.f16, {kDecodeLayers, kDecodeLayers}, arena,
                        &w->memory_scratch);
  }
  if (s.ssru) {
    w->dec_gates = arena->allocate<float>(s.rows * 2 * d, {kDecodeLayers, kDecodeLayers});
    if (s.max_beam > 1) {
      w->ssru_state_scratch = arena->allocate<float>(s.max_beam * d, {kDecodeSearch, kDecodeSearch});
    }
  }
  // Greedy never reorders; beam search does so in its step.
  if (!s.ssru) {  // SSRU decoders cache no positions
    w->cache_rows = arena->allocate<size_t>(s.rows * s.max_target_len, kWholeDecode);
    w->cache_rows_scratch =
        s.max_beam > 1
            ? arena->allocate<size_t>(s.max_beam * s.max_target_len, {kDecodeSearch, kDecodeSearch})
            : nullptr;
  }
  const Lifetime layers{kDecodeLayers, kDecodeLayers};
  w->dec_x = arena->allocate<float>(s.rows * d, {kDecodeLayers, kDecodeOutput});
  w->dec_qkv = arena->allocate<float>(s.rows * 3 * d, layers);
  if (s.raw_self_memory) w->dec_qkv_raw = arena->allocate<float>(s.rows * 3 * d, layers);
  w->dec_q = arena->allocate<float>(s.rows * d, layers);
  w->dec_ctx = arena->allocate<float>(s.rows * d, layers);
  w->dec_out = arena->allocate<float>(s.rows * d, layers);
  w->dec_norm = arena->allocate<float>(s.rows * d, layers);
  w->dec_ffn = arena->allocate<float>(s.rows * s.ffn_dim, layers);
  w->logits = arena->allocate<float>(s.rows * s.vocab, {kDecodeOutput, kDecodeSearch});
  // Every Linear's input is [rows, d] or [rows, f]; encoder outputs (qkv,
  // FFN, cross-attention K | V) are at most max(3d, f) wide, decoder ones
  // max(3d, f, V).
  const size_t depth = std::max(d, s.ffn_dim);
  plan_linear_scratch(ns, depth, std::max(3 * d, s.ffn_dim), s.int8, s.f16,
                      {kAttnQkv, kCrossKv}, arena, &w->enc_linear_scratch);
  plan_linear_scratch(s.rows, depth, std::max(std::max(3 * d, s.ffn_dim), s.vocab),
                      s.int8, s.f16, {kDecodeLayers, kDecodeOutput}, arena, &w->dec_linear_scratch);
  // Encoder self-attention needs a [len, len] score block; decoder steps need
  // one row of at most max(len_source, len_target) keys.
  w->enc_scratch_stride = s.max_source_len * s.max_source_len;
  w->dec_scratch_stride = std::max(s.max_source_len, s.max_target_len + 1);
  w->max_target_len = s.max_target_len;
  w->enc_attention_scratch =
      arena->allocate<float>(s.workers * w->enc_scratch_stride, {kAttnContext, kAttnContext});
  w->dec_attention_scratch =
      arena->allocate<float>(s.workers * w->dec_scratch_stride, {kDecodeLayers, kDecodeLayers});
  w->max_source_len = s.max_source_len;
  if (s.attention) {
    w->attention_layer = s.attention_layer < 0 ? s.decoder_layers - 1 : static_cast<size_t>(s.attention_layer);
    w->attention_head = s.attention_head;
    w->cross_weights_heads =
        arena->allocate<float>(s.rows * s.heads * s.max_source_len, {kDecodeLayers, kDecodeLayers});
    w->cross_weights = arena->allocate<float>(s.rows * s.max_source_len, {kDecodeLayers, kDecodeSearch});
  }
}

}  // namespace edgemt::transformer
