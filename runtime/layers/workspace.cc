#include "layers/workspace.h"

#include <algorithm>

#include "kernels/int8_gemm.h"

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
  // Every Linear's input is [rows, d] or [rows, f], rows <= max(Ns, R); its
  // output is at most 3d (qkv), f or V wide.
  LinearScratch& q = w->linear_scratch;
  q.max_rows = std::max(s.source_rows, s.rows);
  q.max_depth = std::max(d, s.ffn_dim);
  q.max_out = std::max(std::max(3 * d, s.ffn_dim), s.vocab);
  if (s.int8) {
    q.quantized = arena->allocate<int8_t>(q.max_rows * kernels::int8::padded_depth(q.max_depth));
    q.row_scale = arena->allocate<float>(q.max_rows);
  }
  if (s.f16) {
    constexpr size_t kSpare = 16;  // XNN_EXTRA_BYTES readable past the input
    q.half_input = arena->allocate<uint16_t>(q.max_rows * q.max_depth + kSpare);
    q.half_output = arena->allocate<uint16_t>(q.max_rows * q.max_out + kSpare);
  }
  // Encoder self-attention needs a [len, len] score block; decoder steps need
  // one row of at most max(len_source, len_target) keys.
  w->scratch_stride = std::max(s.max_source_len * s.max_source_len, s.max_target_len + 1);
  w->max_target_len = s.max_target_len;
  w->attention_scratch = arena->allocate<float>(s.workers * w->scratch_stride);
}

}  // namespace edgemt
