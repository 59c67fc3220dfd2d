// Int8Scratch: owns the memory of a LinearScratch for int8 Linears (the
// quantized input rows and their scales), for layer tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/int8_gemm.h"
#include "layers/linear_scratch.h"

namespace edgemt::testing {

struct Int8Scratch {
  Int8Scratch(size_t rows, size_t depth)
      : quantized(rows * kernels::int8::padded_depth(depth)), scale(rows) {
    view.quantized = quantized.data();
    view.row_scale = scale.data();
    view.max_rows = rows;
    view.max_depth = depth;
  }
  std::vector<int8_t> quantized;
  std::vector<float> scale;
  LinearScratch view;
};

}  // namespace edgemt::testing
