#include "kernels/activation.h"

#include "core/cpu_features.h"
#include "kernels/portable_math.h"

namespace edgemt {

const char* activation_name(Activation act) {
  switch (act) {
    case Activation::kRelu: return "relu";
    case Activation::kGelu: return "gelu";
    case Activation::kSwish: return "swish";
  }
  return "unknown";
}

}  // namespace edgemt

namespace edgemt::kernels {

void relu(float* x, size_t n) {
  // `x < 0 ? 0 : x` keeps NaN as NaN (torch.relu does too).
  for (size_t i = 0; i < n; ++i) x[i] = x[i] < 0.0f ? 0.0f : x[i];
}

void gelu(float* x, size_t n) {
  // x·Phi(x) with Phi = 0.5·(1 + erf(x/sqrt2)) computed without the
  // 1 + erf cancellation (see math::normal_cdf_f32).
  for (size_t i = 0; i < n; ++i) x[i] = x[i] * math::normal_cdf_f32(x[i]);
}

void swish_portable(float* x, size_t n) {
  // x / (1 + e^-x), as torch's silu: e^-x = inf for x < -89 gives -0.
  for (size_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + math::exp_f32(-x[i]));
}

void swish(float* x, size_t n) {
#if defined(__x86_64__)
  if (cpu_features().avx2) {
    swish_avx2(x, n);
    return;
  }
#endif
  swish_portable(x, n);
}

void apply_activation(Activation activation, float* x, size_t n) {
  switch (activation) {
    case Activation::kRelu: relu(x, n); return;
    case Activation::kGelu: gelu(x, n); return;
    case Activation::kSwish: swish(x, n); return;
  }
}

}  // namespace edgemt::kernels
