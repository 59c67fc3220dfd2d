#include "layers/linear_scratch.h"

#include "kernels/int8_gemm.h"

namespace edgemt {

void plan_linear_scratch(size_t rows, size_t depth, size_t out, bool int8, bool f16,
                         Lifetime lifetime, Arena* arena, LinearScratch* q) {
  q->max_rows = rows;
  q->max_depth = depth;
  q->max_out = out;
  if (int8) {
    q->quantized = arena->allocate<int8_t>(rows * kernels::int8::padded_depth(depth), lifetime);
    q->row_scale = arena->allocate<float>(rows, lifetime);
  }
  if (f16) {
    constexpr size_t kSpare = 16;  // XNN_EXTRA_BYTES readable past the input
    q->half_input = arena->allocate<uint16_t>(rows * depth + kSpare, lifetime);
    q->half_output = arena->allocate<uint16_t>(rows * out + kSpare, lifetime);
  }
}

}  // namespace edgemt
