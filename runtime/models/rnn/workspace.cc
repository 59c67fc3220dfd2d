#include "models/rnn/workspace.h"

#include <algorithm>

namespace edgemt::rnn {

void plan_workspace(const RnnConfig& c, const RnnWorkspaceShape& s, size_t max_beam,
                        Arena* arena, RnnWorkspace* w) {
  using namespace encoder_steps;
  using run_step::kDecodeLayers;
  using run_step::kDecodeOutput;
  using run_step::kDecodeSearch;
  const size_t h = c.hidden;
  const size_t u = rnn_encoder_units(c);
  const size_t g = rnn_gates(c);
  const size_t ns = s.source_rows;
  const bool lstm = c.cell == RnnCell::kLstm;
  const Lifetime layers{kLayers, kLayers};

  w->enc_x = arena->allocate<float>(ns * std::max<size_t>(c.source_embedding_dim, h), {kEmbed, kLayers});
  w->enc_y = c.layers > 1 ? arena->allocate<float>(ns * h, layers) : nullptr;
  w->enc_gx = arena->allocate<float>(ns * g * u, layers);
  w->enc_gh = arena->allocate<float>(s.sentences * g * u, layers);
  w->enc_h = arena->allocate<float>(s.sentences * u, layers);
  w->enc_c = lstm ? arena->allocate<float>(s.sentences * u, layers) : nullptr;
  w->memory = arena->allocate<float>(ns * h, {kLayers, kDecodeSearch});
  w->keys = c.score != RnnScore::kDot ? arena->allocate<float>(ns * h, {kKeys, kDecodeSearch}) : nullptr;
  for (size_t l = 0; l < c.layers; ++l) {
    w->init_h[l] = arena->allocate<float>(s.sentences * h, {kLayers, kDecodeSearch});
    w->init_c[l] = lstm ? arena->allocate<float>(s.sentences * h, {kLayers, kDecodeSearch}) : nullptr;
    w->state_h[l] = arena->allocate<float>(s.rows * h, kWholeDecode);
    w->state_c[l] = lstm ? arena->allocate<float>(s.rows * h, kWholeDecode) : nullptr;
  }
  const bool feed = c.decoder_input == RnnDecoderInput::kEmbeddingInputFeed;
  w->state_feed = feed ? arena->allocate<float>(s.rows * h, kWholeDecode) : nullptr;
  w->reorder_scratch =
      max_beam > 1 ? arena->allocate<float>(max_beam * h, {kDecodeSearch, kDecodeSearch}) : nullptr;

  const Lifetime step{kDecodeLayers, kDecodeLayers};
  for (size_t l = 0; l < c.layers; ++l) {
    w->row_h[l] = arena->allocate<float>(s.rows * h, step);
    w->row_c[l] = lstm ? arena->allocate<float>(s.rows * h, step) : nullptr;
  }
  const size_t di = rnn_decoder_input_dim(c);
  w->dec_x = arena->allocate<float>(s.rows * di, step);
  w->dec_gx = arena->allocate<float>(s.rows * g * h, step);
  w->dec_gh = arena->allocate<float>(s.rows * g * h, step);
  w->dec_query = c.score == RnnScore::kAdditive ? arena->allocate<float>(s.rows * h, step) : nullptr;
  w->dec_cat = arena->allocate<float>(s.rows * 2 * h, {kDecodeLayers, kDecodeOutput});
  w->dec_attn = arena->allocate<float>(s.rows * h, {kDecodeLayers, kDecodeOutput});
  w->context = arena->allocate<float>(s.rows * h, step);
  w->weights = arena->allocate<float>(s.rows * s.max_source_len, {kDecodeLayers, kDecodeSearch});  // read by the search
  w->logits = arena->allocate<float>(s.rows * c.vocab_size, {kDecodeOutput, kDecodeSearch});
  w->max_source_len = s.max_source_len;

  // Encoder Linears read [Ns, max(Es, H)] (ih, keys) or [B, U] (hh) and
  // write at most max(G·U, H); decoder ones read up to max(DI, 2H) and
  // write up to max(G·H, V).
  const size_t enc_depth = std::max<size_t>(c.source_embedding_dim, h);
  plan_linear_scratch(ns, enc_depth, std::max(g * u, h), s.int8, s.f16, {kLayers, kKeys},
                      arena, &w->enc_linear_scratch);
  plan_linear_scratch(s.rows, std::max(di, 2 * h), std::max<size_t>(g * h, c.vocab_size),
                      s.int8, s.f16, {kDecodeLayers, kDecodeOutput}, arena, &w->dec_linear_scratch);
}

}  // namespace edgemt::rnn
