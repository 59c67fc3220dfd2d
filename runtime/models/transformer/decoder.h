// Decoder: one incremental step for R live hypotheses.
//
// Row r of every [R, ·] buffer is one hypothesis; it belongs to source
// sequence row_source[r] and attends to that source's rows of memory_kv.
// Its keys/values live in cache slot row_slot[r] ([slots, T, d] per layer);
// the step appends them at position `step` and attends over positions
// 0..step, so no causal mask is needed: the future is simply not there yet.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/transformer/encoder.h"

namespace edgemt::transformer {

// The step up to the decoder's last hidden state, workspace->dec_x [R, d]
// (head_input()), which the family kit's output head projects to the
// logits (models/family_kit.h, models/output_head.h).
[[nodiscard]] Status run_decoder_layers(const RunContext& context, const PackedSequences& sources,
                                        const DecoderStep& step);
const float* head_input(const RunContext& context);

// Beam reordering inside one sentence's slots [first_slot, first_slot + K):
// new slot first_slot + j gets old slot first_slot + parent[j], positions
// 0..positions-1, for every layer (j < new_count, parent[j] < old_count);
// with an SSRU decoder, its state rows too.
void reorder_state(const RunContext& context, size_t first_slot, size_t old_count,
                   const size_t* parent, size_t new_count, size_t positions);

}  // namespace edgemt::transformer
