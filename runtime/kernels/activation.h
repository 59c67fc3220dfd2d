// Element-wise activations, in place (own: XNNPACK 2022 has no GELU).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {

enum class Activation : uint8_t { kRelu = 0, kGelu = 1, kSwish = 2 };

const char* activation_name(Activation act);  // "relu", "gelu", "swish"

}  // namespace edgemt

namespace edgemt::kernels {

void relu(float* x, size_t n);
// Exact GELU: x * 0.5 * (1 + erf(x / sqrt(2))), as torch's default.
void gelu(float* x, size_t n);
// SiLU: x * sigmoid(x).
void swish(float* x, size_t n);

void apply_activation(Activation activation, float* x, size_t n);

}  // namespace edgemt::kernels
