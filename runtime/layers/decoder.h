// Decoder: one incremental step for R live hypotheses.
//
// Row r of every [R, ·] buffer is one hypothesis; it belongs to source
// sequence row_source[r] and attends to that source's rows of memory_kv.
// The step appends the new keys/values at position `step` of cache `cache`
// ([R, T, d] per layer) and attends over positions 0..step, so no causal mask
// is needed: the future is simply not there yet.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layers/encoder.h"

namespace edgemt {

struct DecoderStep {
  size_t rows = 0;                     // R
  size_t step = 0;                     // position of the input tokens
  size_t cache = 0;                    // which of the two K/V caches is current
  const int32_t* tokens = nullptr;     // [R] input token per hypothesis
  const size_t* row_source = nullptr;  // [R] source sequence of each hypothesis
};

// On return workspace->logits holds [R, V].
[[nodiscard]] Status run_decoder_step(const RunContext& context, const PackedSequences& sources,
                                      const DecoderStep& step);

// Beam reordering: row r of cache `to` gets row parent[r] of cache `from`,
// positions 0..positions-1, for every layer.
void gather_cache(const RunContext& context, size_t from, size_t to, const size_t* parent,
                  size_t rows, size_t positions);

}  // namespace edgemt
