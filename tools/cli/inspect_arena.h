// The run-phase memory of a model for `edgemt inspect`: the arena
// Translator::prepare() would take (Translator::arena_plan, nothing is
// allocated) for a few batch, beam and length limits.
#pragma once

#include "edgemt/model.h"
#include "edgemt/translator.h"

namespace edgemt::cli {

// The summary's line: the smallest limits inspect plans for (batch 1,
// greedy, up to 128 tokens) and the largest (batch 32, beam 4, the model's
// max length).
void print_arena_range(const Model& model, const Translator& translator);

// --arena: the table, arena and unshared MiB for source and target both up
// to 128 tokens (or the model's max length if fewer) and up to the max
// length, at batch x beam 1x1, 16x1, 16x4 and 32x4.
void print_arena_table(const Model& model, const Translator& translator);

}  // namespace edgemt::cli
