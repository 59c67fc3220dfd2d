#include "layers/workspace.h"

#include <algorithm>

namespace edgemt {

void plan_workspace(const WorkspaceShape& s, Arena* arena, Workspace* w) {
  const size_t d = s.d_model;
  w->enc_x = arena->allocate<float>(s.source_rows * d);
  w->enc_qkv = arena->allocate<float>(s.source_rows * 3 * d);
  w->enc_ctx = arena->allocate<float>(s.source_rows * d);
  w->enc_out = arena->allocate<float>(s.source_rows * d);
  w->enc_norm = arena->allocate<float>(s.source_rows * d);
  w->enc_ffn = arena->allocate<float>(s.source_rows * s.ffn_dim);
  for (size_t l = 0; l < s.decoder_layers; ++l) {
    w->memory_kv[l] = arena->allocate<float>(s.source_rows * 2 * d);
  }
  for (size_t l = 0; l < s.decoder_layers; ++l) {
    w->k_cache[l] = arena->allocate<float>(s.rows * s.max_target_len * d);
    w->v_cache[l] = arena->allocate<float>(s.rows * s.max_target_len * d);
  }
  w->reorder_scratch = arena->allocate<float>(s.max_beam * s.max_target_len * d);
  w->dec_x = arena->allocate<float>(s.rows * d);
  w->dec_qkv = arena->allocate<float>(s.rows * 3 * d);
  w->dec_q = arena->allocate<float>(s.rows * d);
  w->dec_ctx = arena->allocate<float>(s.rows * d);
  w->dec_out = arena->allocate<float>(s.rows * d);
  w->dec_norm = arena->allocate<float>(s.rows * d);
  w->dec_ffn = arena->allocate<float>(s.rows * s.ffn_dim);
  w->logits = arena->allocate<float>(s.rows * s.vocab);
  // Encoder self-attention needs a [len, len] score block; decoder steps need
  // one row of at most max(len_source, len_target) keys.
  w->scratch_stride = std::max(s.max_source_len * s.max_source_len, s.max_target_len + 1);
  w->max_target_len = s.max_target_len;
  w->attention_scratch = arena->allocate<float>(s.workers * w->scratch_stride);
}

}  // namespace edgemt
