// Encoder: the source side, run once per batch.
//
// Sources are packed without padding: sequence s occupies rows
// [offsets[s], offsets[s+1]) of every [Ns, ·] buffer, so GEMMs never compute
// pad rows. Self-attention of a sequence only sees its own rows; the padding
// mask of a padded layout becomes each sequence's key length here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/parallel.h"
#include "edgemt/model.h"
#include "edgemt/profile.h"
#include "edgemt/status.h"
#include "models/transformer/weights.h"
#include "models/encoder_decoder.h"
#include "models/transformer/workspace.h"

namespace edgemt::transformer {

struct RunContext {
  const TransformerConfig* config = nullptr;
  const TransformerWeights* weights = nullptr;
  Workspace* workspace = nullptr;
  Parallel parallel;  // threads, scratch slots, smallest work worth splitting
  Profile* profile = nullptr;  // nullptr: not profiling (see core/profile.h)
};

// ids: packed source ids [rows]. On return workspace->enc_x holds the encoder
// output [rows, d] and workspace->memory_kv[l] the cross-attention K|V of
// every decoder layer [rows, 2d].
[[nodiscard]] Status run_encoder(const RunContext& context, const int32_t* ids,
                                 const PackedSequences& sequences);

}  // namespace edgemt::transformer
