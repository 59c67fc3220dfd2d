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
// SiLU: x * sigmoid(x), as x / (1 + e^-x) with math::exp_f32. The AVX2
// variant gives the portable loop's bits; swish() runs the fastest.
void swish(float* x, size_t n);
void swish_portable(float* x, size_t n);
#if defined(__x86_64__)
void swish_avx2(float* x, size_t n);
#endif

void apply_activation(Activation activation, float* x, size_t n);

}  // namespace edgemt::kernels
