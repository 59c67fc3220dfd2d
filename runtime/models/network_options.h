// What a Translator's options ask of its network's load phase: create_encoder_decoder
// (models/families.h) hands them to the family's load_weights, which hands
// them to its MatrixLoader.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {

struct NetworkOptions {
  // The run phase's threads (XNNPACK GEMMs split into column blocks,
  // layers/column_blocks.h; the results do not depend on it).
  size_t threads = 1;
  // For a file in Marian's int8 arithmetic: 0 for exact sums, or the lane
  // count of the intgemm registers whose saturating sums to reproduce
  // (kernels/int8_gemm_marian.h; TranslatorOptions::marian_int8_sums).
  int32_t marian_saturating_lanes = 0;
  // Int8 ReLU feed-forward blocks with their hidden units reordered for the
  // kernels' zero-skipping (models/relu_units.h; the same output). Off
  // only in tests that compare the two.
  bool order_relu_units = true;
};

}  // namespace edgemt
