#include "models/rnn/decoder.h"

#include <cstring>

#include "core/parallel.h"
#include "core/profile.h"
#include "kernels/embedding.h"
#include "kernels/portable_math.h"
#include "kernels/rnn_attention.h"
#include "kernels/rnn_cell.h"

namespace edgemt::rnn {
namespace {

// Rows r of `out` [R, width] (row stride `stride`, from column `column`)
// take row index[r] of `in` [·, width].
void gather(const float* in, const size_t* index, size_t rows, size_t width, float* out,
            size_t stride, size_t column) {
  for (size_t r = 0; r < rows; ++r) {
    std::memcpy(out + r * stride + column, in + index[r] * width, width * sizeof(float));
  }
}

void scatter(const float* in, const size_t* index, size_t rows, size_t width, float* out) {
  for (size_t r = 0; r < rows; ++r) std::memcpy(out + index[r] * width, in + r * width, width * sizeof(float));
}

// c_t and the weights for every row, from query rows `query` [R, H] (the
// top state, or Q s + b for additive scores). context [R, H].
void attend(const RnnRunContext& c, const PackedSequences& sources, const DecoderStep& step,
            const float* query, float* context) {
  ProfileScope timed(c.profile, ProfilePart::kSourceAttention);
  const RnnConfig& config = *c.config;
  RnnWorkspace& w = *c.workspace;
  const size_t h = config.hidden;
  const kernels::RnnScoreForm form =
      config.score == RnnScore::kAdditive ? kernels::RnnScoreForm::kAdditive : kernels::RnnScoreForm::kDot;
  const float* keys = config.score == RnnScore::kDot ? w.memory : w.keys;
  auto row = [&](size_t r, size_t) {
    const size_t s = step.row_source[r];
    const size_t first = sources.offsets[s];
    const size_t n = sources.offsets[s + 1] - first;
    kernels::rnn_attend(form, query + r * h, keys + first * h, w.memory + first * h,
                        c.weights->attention_v, n, h, w.weights + r * w.max_source_len, context + r * h);
  };
  // ~1 ns per multiply-add (dot), ~4 with a tanh (additive), two passes.
  const size_t mean_len = sources.offsets[sources.count] / (sources.count ? sources.count : 1);
  const size_t ns_per_row = mean_len * h * (form == kernels::RnnScoreForm::kAdditive ? 5 : 2);
  parallel_for(c.parallel, step.rows, ns_per_row, row);
}

// The query's attention: for additive scores Q s + b first, in one GEMM.
Status attend_from(const RnnRunContext& c, const PackedSequences& sources, const DecoderStep& step,
                   const float* state, float* context) {
  RnnWorkspace& w = *c.workspace;
  if (c.config->score != RnnScore::kAdditive) {
    attend(c, sources, step, state, context);
    return Status::ok();
  }
  {
    ProfileScope timed(c.profile, ProfilePart::kAttentionGemm);
    EDGEMT_RETURN_IF_ERROR(
        c.weights->attention_query.run(state, step.rows, w.dec_query, c.parallel, &w.dec_linear_scratch));
  }
  attend(c, sources, step, w.dec_query, context);
  return Status::ok();
}

// Each row's recurrent state for this step into row_h/row_c [R, H] (the
// first step: its sentence's encoder-final state; later ones: its slot's),
// and the input feed (the previous attentional output) into dec_x.
void load_states(const RnnRunContext& c, const DecoderStep& step) {
  ProfileScope part(c.profile, ProfilePart::kDecoderState);
  const RnnConfig& config = *c.config;
  RnnWorkspace& w = *c.workspace;
  const size_t h = config.hidden;
  const bool first = step.step == 0;
  const size_t* index = first ? step.row_source : step.row_slot;
  for (size_t l = 0; l < config.layers; ++l) {
    gather(first ? w.init_h[l] : w.state_h[l], index, step.rows, h, w.row_h[l], h, 0);
    if (config.cell == RnnCell::kLstm) {
      gather(first ? w.init_c[l] : w.state_c[l], index, step.rows, h, w.row_c[l], h, 0);
    }
  }
  if (config.decoder_input != RnnDecoderInput::kEmbeddingInputFeed) return;
  const size_t di = rnn_decoder_input_dim(config);
  const size_t et = config.target_embedding_dim;
  if (first) {
    for (size_t r = 0; r < step.rows; ++r) std::memset(w.dec_x + r * di + et, 0, h * sizeof(float));
  } else {
    gather(w.state_feed, step.row_slot, step.rows, h, w.dec_x, di, et);
  }
}

// The first layer's input dec_x [R, DI]: the token's embedding, then (input
// feed, loaded above) or (Bahdanau: c_t from the previous top state).
Status embed_input(const RnnRunContext& c, const PackedSequences& sources, const DecoderStep& step) {
  const RnnConfig& config = *c.config;
  RnnWorkspace& w = *c.workspace;
  const size_t di = rnn_decoder_input_dim(config);
  {
    ProfileScope part(c.profile, ProfilePart::kEmbedding);
    kernels::gather_rows(c.weights->target_embedding, step.tokens, step.rows, w.dec_x, di);
  }
  if (config.decoder_input != RnnDecoderInput::kEmbeddingContext) return Status::ok();
  const size_t h = config.hidden;
  const size_t et = config.target_embedding_dim;
  EDGEMT_RETURN_IF_ERROR(attend_from(c, sources, step, w.row_h[config.layers - 1], w.context));
  for (size_t r = 0; r < step.rows; ++r) {
    std::memcpy(w.dec_x + r * di + et, w.context + r * h, h * sizeof(float));
  }
  return Status::ok();
}

// One step of every layer's cell, bottom up: row_h (and row_c) [R, H].
Status run_cells(const RnnRunContext& c, const DecoderStep& step) {
  ProfileScope part(c.profile, ProfilePart::kDecoderState);
  const RnnConfig& config = *c.config;
  RnnWorkspace& w = *c.workspace;
  const size_t h = config.hidden;
  const size_t gh = rnn_gates(config) * h;
  const float* x = w.dec_x;
  for (size_t l = 0; l < config.layers; ++l) {
    const RnnLayerWeights& layer = c.weights->decoder[l];
    EDGEMT_RETURN_IF_ERROR(layer.ih.run(x, step.rows, w.dec_gx, c.parallel, &w.dec_linear_scratch));
    EDGEMT_RETURN_IF_ERROR(layer.hh.run(w.row_h[l], step.rows, w.dec_gh, c.parallel, &w.dec_linear_scratch));
    for (size_t r = 0; r < step.rows; ++r) {
      if (config.cell == RnnCell::kLstm) {
        kernels::lstm_cell(w.dec_gx + r * gh, w.dec_gh + r * gh, h, w.row_c[l] + r * h, w.row_h[l] + r * h);
      } else {
        kernels::gru_cell(w.dec_gx + r * gh, w.dec_gh + r * gh, h, w.row_h[l] + r * h);
      }
    }
    x = w.row_h[l];
  }
  return Status::ok();
}

// The output head's input from the top state s_t and the context c_t:
// [s_t; c_t] (StateContext, whose c_t was computed before the step) into
// dec_cat [R, 2H], else (tanh) W [c_t; s_t] + b into dec_attn [R, H].
Status attend_and_combine(const RnnRunContext& c, const PackedSequences& sources,
                          const DecoderStep& step) {
  const RnnConfig& config = *c.config;
  RnnWorkspace& w = *c.workspace;
  const size_t h = config.hidden;
  const size_t rows = step.rows;
  const float* state = w.row_h[config.layers - 1];  // s_t [R, H]
  if (config.output == RnnOutput::kStateContext) {
    for (size_t r = 0; r < rows; ++r) {
      std::memcpy(w.dec_cat + r * 2 * h, state + r * h, h * sizeof(float));
      std::memcpy(w.dec_cat + r * 2 * h + h, w.context + r * h, h * sizeof(float));
    }
    return Status::ok();
  }
  EDGEMT_RETURN_IF_ERROR(attend_from(c, sources, step, state, w.context));
  ProfileScope part(c.profile, ProfilePart::kAttentionGemm);
  for (size_t r = 0; r < rows; ++r) {
    std::memcpy(w.dec_cat + r * 2 * h, w.context + r * h, h * sizeof(float));
    std::memcpy(w.dec_cat + r * 2 * h + h, state + r * h, h * sizeof(float));
  }
  EDGEMT_RETURN_IF_ERROR(
      c.weights->attention_combine.run(w.dec_cat, rows, w.dec_attn, c.parallel, &w.dec_linear_scratch));
  if (config.output == RnnOutput::kTanhCombine) {
    for (size_t i = 0; i < rows * h; ++i) w.dec_attn[i] = kernels::math::tanh_f32(w.dec_attn[i]);
  }
  return Status::ok();
}

// The step's states (and input feed) back into the hypotheses' slots.
void store_states(const RnnRunContext& c, const DecoderStep& step) {
  ProfileScope part(c.profile, ProfilePart::kDecoderState);
  const RnnConfig& config = *c.config;
  RnnWorkspace& w = *c.workspace;
  const size_t h = config.hidden;
  for (size_t l = 0; l < config.layers; ++l) {
    scatter(w.row_h[l], step.row_slot, step.rows, h, w.state_h[l]);
    if (config.cell == RnnCell::kLstm) scatter(w.row_c[l], step.row_slot, step.rows, h, w.state_c[l]);
  }
  if (config.decoder_input == RnnDecoderInput::kEmbeddingInputFeed) {
    scatter(w.dec_attn, step.row_slot, step.rows, h, w.state_feed);
  }
}

}  // namespace

Status run_decoder_layers(const RnnRunContext& c, const PackedSequences& sources,
                          const DecoderStep& step) {
  load_states(c, step);
  EDGEMT_RETURN_IF_ERROR(embed_input(c, sources, step));
  EDGEMT_RETURN_IF_ERROR(run_cells(c, step));
  EDGEMT_RETURN_IF_ERROR(attend_and_combine(c, sources, step));
  store_states(c, step);
  return Status::ok();
}

const float* head_input(const RnnRunContext& c) {
  return c.config->output == RnnOutput::kStateContext ? c.workspace->dec_cat : c.workspace->dec_attn;
}

void reorder_state(const RnnRunContext& c, size_t first_slot, size_t old_count, const size_t* parent,
                   size_t new_count, size_t /*positions*/) {
  ProfileScope timed(c.profile, ProfilePart::kSearch);
  const RnnConfig& config = *c.config;
  RnnWorkspace& w = *c.workspace;
  const size_t h = config.hidden;
  float* scratch = w.reorder_scratch;  // [max_beam, H]
  auto reorder = [&](float* state) {
    float* slots = state + first_slot * h;
    std::memcpy(scratch, slots, old_count * h * sizeof(float));
    for (size_t j = 0; j < new_count; ++j) std::memcpy(slots + j * h, scratch + parent[j] * h, h * sizeof(float));
  };
  for (size_t l = 0; l < config.layers; ++l) {
    reorder(w.state_h[l]);
    if (config.cell == RnnCell::kLstm) reorder(w.state_c[l]);
  }
  if (config.decoder_input == RnnDecoderInput::kEmbeddingInputFeed) reorder(w.state_feed);
}

}  // namespace edgemt::rnn
