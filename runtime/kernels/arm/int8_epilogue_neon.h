// The float part of the NEON int8 kernels for 4 columns of one row:
//   y = float(sum + shift · column_sum) · (x_scale · w_scale) + bias, then
//   y > 0 ? y : 0 with ReLU (shift: GemmArgs::sum_shift),
// the order of int8_gemm.h; stores the first `count` (1..4) lanes.
// `static`: each kernel file keeps its own copy, compiled for its own target.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

namespace edgemt::kernels::int8 {

static inline void store_dequantized_neon(int32x4_t sum, float x_scale, const float* w_scale,
                                          const float* bias, const int32_t* column_sum,
                                          int32_t shift, bool relu, float* out, size_t count) {
  if (shift != 0) sum = vmlaq_n_s32(sum, vld1q_s32(column_sum), shift);
  const float32x4_t scale = vmulq_f32(vdupq_n_f32(x_scale), vld1q_f32(w_scale));
  float32x4_t y = vaddq_f32(vmulq_f32(vcvtq_f32_s32(sum), scale), vld1q_f32(bias));
  if (relu) {
    const float32x4_t zero = vdupq_n_f32(0.0f);
    y = vbslq_f32(vcgtq_f32(y, zero), y, zero);
  }
  if (count >= 4) {
    vst1q_f32(out, y);
    return;
  }
  float lanes[4];
  vst1q_f32(lanes, y);
  for (size_t i = 0; i < count; ++i) out[i] = lanes[i];
}

}  // namespace edgemt::kernels::int8
