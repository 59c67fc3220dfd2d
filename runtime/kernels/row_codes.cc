#include "kernels/row_codes.h"

#include <cmath>

#include "core/cpu_features.h"

namespace edgemt::kernels {

void row_magnitudes_portable(const float* w, size_t depth, float* largest, double* sum) {
  // 16 independent maxima and sums: one running value waits ~4 cycles per
  // weight on its previous one. Comparisons, not std::fmax (a libm call
  // per weight without -ffinite-math-only).
  float most[kRowCodeLanes] = {};
  double sums[kRowCodeLanes] = {};
  auto add = [&](size_t lane, float x) {
    const float magnitude = std::fabs(x);
    most[lane] = magnitude > most[lane] ? magnitude : most[lane];
    sums[lane] += static_cast<double>(magnitude);
  };
  size_t k = 0;
  for (; k + kRowCodeLanes <= depth; k += kRowCodeLanes) {
    for (size_t lane = 0; lane < kRowCodeLanes; ++lane) add(lane, w[k + lane]);
  }
  for (size_t lane = 0; k + lane < depth; ++lane) add(lane, w[k + lane]);
  float best = 0.0f;
  for (float m : most) best = m > best ? m : best;
  for (size_t half = kRowCodeLanes / 2; half >= 1; half /= 2) {
    for (size_t j = 0; j < half; ++j) sums[j] += sums[j + half];
  }
  *largest = best;
  *sum = sums[0];
}

double quantize_row_portable(const float* w, size_t depth, float s, float inverse, int8_t* codes) {
  constexpr float kShifter = 12582912.0f;  // 1.5·2^23
  double errors[4] = {};
  for (size_t k = 0; k < depth; ++k) {
    const float rounded = (w[k] * inverse + kShifter) - kShifter;
    const float code = rounded > 127.0f ? 127.0f : (rounded < -127.0f ? -127.0f : rounded);
    codes[k] = static_cast<int8_t>(code);
    const double miss =
        std::fabs(static_cast<double>(w[k]) - static_cast<double>(s) * static_cast<double>(code));
    double& error = errors[k % 4];
    error = miss > error ? miss : error;
  }
  const double low = errors[0] > errors[1] ? errors[0] : errors[1];
  const double high = errors[2] > errors[3] ? errors[2] : errors[3];
  return low > high ? low : high;
}

void row_magnitudes(const float* w, size_t depth, float* largest, double* sum) {
#if defined(__x86_64__)
  const CpuFeatures& cpu = cpu_features();
  if (cpu.avx512) return row_magnitudes_avx512(w, depth, largest, sum);
  if (cpu.avx2) return row_magnitudes_avx2(w, depth, largest, sum);
#endif
  row_magnitudes_portable(w, depth, largest, sum);
}

double quantize_row(const float* w, size_t depth, float s, float inverse, int8_t* codes) {
#if defined(__x86_64__)
  const CpuFeatures& cpu = cpu_features();
  if (cpu.avx512) return quantize_row_avx512(w, depth, s, inverse, codes);
  if (cpu.avx2) return quantize_row_avx2(w, depth, s, inverse, codes);
#endif
  return quantize_row_portable(w, depth, s, inverse, codes);
}

}  // namespace edgemt::kernels
