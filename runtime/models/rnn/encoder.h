// The RNN encoder: every layer over every packed source (sequence s in rows
// [offsets[s], offsets[s+1]), no padding), one direction after the other.
// Per layer and direction the input projections of all time steps are one
// GEMM; each time step is then one GEMM for the recurrent gates of all
// sentences still running and the cell. Afterwards the attention keys
// K h_i are projected once for the whole batch.
#pragma once

#include "edgemt/status.h"
#include "models/encoder_decoder.h"
#include "models/rnn/workspace.h"

namespace edgemt::rnn {

// ids: packed source ids [Ns]. On return workspace->memory holds the last
// layer's outputs [Ns, H], ->keys the keys (General, Additive) and
// ->init_h / init_c the decoder's first state per sentence and layer.
[[nodiscard]] Status run_encoder(const RnnRunContext& context, const int32_t* ids,
                                     const PackedSequences& sequences);

}  // namespace edgemt::rnn
