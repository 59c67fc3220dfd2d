// IEEE 754 binary16 <-> binary32 conversion (exact for f16 -> f32, round to
// nearest even for f32 -> f16), handling zeros, subnormals, inf and NaN.
// Used at load time to widen f16 weights on CPUs without fp16 arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt::kernels {

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
void f16_to_f32_array(const uint16_t* src, float* dst, size_t n);

}  // namespace edgemt::kernels
