// LinearScratch: run-phase memory a Linear borrows for its converted
// operands, planned once in the workspace (models/transformer/workspace.h). f32
// Linears need none; int8 ones quantize their input rows into it; f16 ones
// (XNNPACK f16 GEMMs on CPUs with fp16 arithmetic) convert their input to
// half and take their output as half before widening it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/arena.h"

namespace edgemt {

struct LinearScratch {
  size_t max_rows = 0;
  size_t max_depth = 0;          // largest in_features served
  size_t max_out = 0;            // largest out_features served (f16)
  // int8: [max_rows, padded_depth(max_depth)] and [max_rows].
  int8_t* quantized = nullptr;
  float* row_scale = nullptr;
  // f16: [max_rows, max_depth] and [max_rows, max_out] IEEE half, each with
  // XNN_EXTRA_BYTES to spare.
  uint16_t* half_input = nullptr;
  uint16_t* half_output = nullptr;
};

// Requests from `arena` the scratch of the int8 (`int8`) or f16 (`f16`)
// Linears that run on up to `rows` rows, `depth` inputs and `out` outputs,
// live during `lifetime`; f32 models need none (the pointers stay null).
void plan_linear_scratch(size_t rows, size_t depth, size_t out, bool int8, bool f16,
                         Lifetime lifetime, Arena* arena, LinearScratch* scratch);

}  // namespace edgemt
