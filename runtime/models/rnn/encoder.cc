#include "models/rnn/encoder.h"

#include <cstring>

#include "core/profile.h"
#include "kernels/embedding.h"
#include "kernels/rnn_cell.h"

namespace edgemt::rnn {
namespace {

// One layer in one direction. x: [Ns, in] the layer's input; out: [Ns, H],
// of which this direction writes columns [column, column + U). The final
// state of sentence s goes to init_h/init_c[s] at the same columns.
Status run_direction(const RnnRunContext& c, const PackedSequences& seqs, const RnnLayerWeights& layer,
                     bool reverse, const float* x, float* out, size_t column, float* init_h,
                     float* init_c) {
  const RnnConfig& config = *c.config;
  RnnWorkspace& w = *c.workspace;
  const size_t h = config.hidden;
  const size_t u = rnn_encoder_units(config);
  const size_t gu = rnn_gates(config) * u;
  const bool lstm = config.cell == RnnCell::kLstm;
  const size_t rows = seqs.offsets[seqs.count];
  const size_t batch = seqs.count;
  // gx [Ns, G·U]: every time step's input projection in one GEMM.
  EDGEMT_RETURN_IF_ERROR(layer.ih.run(x, rows, w.enc_gx, c.parallel, &w.enc_linear_scratch));
  std::memset(w.enc_h, 0, batch * u * sizeof(float));
  if (lstm) std::memset(w.enc_c, 0, batch * u * sizeof(float));
  size_t longest = 0;
  for (size_t s = 0; s < batch; ++s) {
    const size_t len = seqs.offsets[s + 1] - seqs.offsets[s];
    longest = len > longest ? len : longest;
  }
  for (size_t t = 0; t < longest; ++t) {
    // gh [B, G·U] for every sentence (those already finished are computed
    // and dropped: at most the batch's length spread in extra rows).
    EDGEMT_RETURN_IF_ERROR(layer.hh.run(w.enc_h, batch, w.enc_gh, c.parallel, &w.enc_linear_scratch));
    for (size_t s = 0; s < batch; ++s) {
      const size_t first = seqs.offsets[s];
      const size_t len = seqs.offsets[s + 1] - first;
      if (t >= len) continue;
      const size_t row = first + (reverse ? len - 1 - t : t);
      float* state = w.enc_h + s * u;
      if (lstm) {
        kernels::lstm_cell(w.enc_gx + row * gu, w.enc_gh + s * gu, u, w.enc_c + s * u, state);
      } else {
        kernels::gru_cell(w.enc_gx + row * gu, w.enc_gh + s * gu, u, state);
      }
      std::memcpy(out + row * h + column, state, u * sizeof(float));
    }
  }
  for (size_t s = 0; s < batch; ++s) {
    std::memcpy(init_h + s * h + column, w.enc_h + s * u, u * sizeof(float));
    if (lstm) std::memcpy(init_c + s * h + column, w.enc_c + s * u, u * sizeof(float));
  }
  return Status::ok();
}

}  // namespace

Status run_encoder(const RnnRunContext& c, const int32_t* ids, const PackedSequences& seqs) {
  ProfileScope timed(c.profile, ProfilePart::kEncoder);
  const RnnConfig& config = *c.config;
  const RnnWeights& weights = *c.weights;
  RnnWorkspace& w = *c.workspace;
  const size_t rows = seqs.offsets[seqs.count];
  // x [Ns, Es]: the source embeddings.
  kernels::gather_rows(weights.source_embedding, ids, rows, w.enc_x, config.source_embedding_dim);
  const float* x = w.enc_x;
  for (size_t l = 0; l < config.layers; ++l) {
    // Outputs ping-pong between enc_y and enc_x; the last layer's go to memory.
    float* out = l + 1 == config.layers ? w.memory : (l % 2 == 0 ? w.enc_y : w.enc_x);
    EDGEMT_RETURN_IF_ERROR(
        run_direction(c, seqs, weights.encoder[l], false, x, out, 0, w.init_h[l], w.init_c[l]));
    if (config.bidirectional_encoder) {
      EDGEMT_RETURN_IF_ERROR(run_direction(c, seqs, weights.encoder_reverse[l], true, x, out,
                                           rnn_encoder_units(config), w.init_h[l], w.init_c[l]));
    }
    x = out;
  }
  if (config.score != RnnScore::kDot) {
    EDGEMT_RETURN_IF_ERROR(weights.attention_key.run(w.memory, rows, w.keys, c.parallel, &w.enc_linear_scratch));
  }
  return Status::ok();
}

}  // namespace edgemt::rnn
