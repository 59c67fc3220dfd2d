// One step of the RNN decoder for R live hypotheses (models/encoder_decoder.h
// DecoderStep), in the order the config names (schema/edgemt.fbs RnnConfig):
//
//   state    gathered from the slots (the first step: each sentence's
//            encoder-final state; the input feed starts at zeros)
//   input    x = emb(y), [emb(y); c_t] with c_t attended from the previous
//            top state (Bahdanau), or [emb(y); a_{t-1}] (input feed)
//   layers   per layer gx = ih(x), gh = hh(h) (one GEMM each for all gates
//            of all rows), the cell; x = the new h
//   attend   c_t from the new top state s_t (Luong, OpenNMT)
//   output   logits = out(a_t), a_t = tanh(W_c [c_t; s_t] + b) or without
//            tanh; or logits = out([s_t; c_t]) (Bahdanau)
//   state    scattered back to the slots
#pragma once

#include "edgemt/status.h"
#include "models/encoder_decoder.h"
#include "models/rnn/workspace.h"

namespace edgemt::rnn {

// Everything up to the output projection, which the family kit runs
// (models/output_head.h) on head_input(): on success workspace->weights
// holds the attention weights of the step [step.rows, max_source_len] (row
// r's first n entries, n its source's length).
[[nodiscard]] Status run_decoder_layers(const RnnRunContext& context,
                                        const PackedSequences& sources, const DecoderStep& step);
// The output projection's input [step.rows, K]: a_t, or [s_t; c_t].
const float* head_input(const RnnRunContext& context);

// Beam reordering (EncoderDecoder::reorder_state): the slots' state rows
// (`positions` is the Transformer's: an RNN keeps one state per slot).
void reorder_state(const RnnRunContext& context, size_t first_slot, size_t old_count,
                   const size_t* parent, size_t new_count, size_t positions);

}  // namespace edgemt::rnn
