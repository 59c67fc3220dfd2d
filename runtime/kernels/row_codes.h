// One f32 row made into int8 codes, for the arg-max shortcut's int8 copy of
// an output projection (layers/argmax_shortcut.cc), which reads every row
// of the matrix once when an fp32 model is prepared for greedy translation
// (OPUS-MT-base: 58,101 rows of 512).
//
// row_magnitudes(w, K): max_k |w[k]| (a NaN is skipped) and Σ_k |w[k]| in
//   double (a NaN or inf makes it non-finite). The sum is taken in 16
//   lanes, lane j holding k ≡ j (mod 16) in k order, then the lanes
//   pairwise: j + 8, j + 4, j + 2, j + 1.
// quantize_row(w, K, s, inverse): codes[k] = w[k]·inverse rounded to
//   nearest even by adding and taking away 1.5·2^23 (float32, no FMA; as
//   std::nearbyint, without a libm call per weight on x86-64's baseline),
//   clamped to [-127, 127]; returns max_k |w[k] − s·codes[k]|, exact in
//   double. `inverse` finite, |w[k]·inverse| ≤ ~127.
//
// The shortcut's margin for ‖w‖₁ holds for any order of the sum; the fixed
// order makes the bounds, too, the same on every CPU.
//
// Every variant gives the same bits (tests/runtime/kernels/row_codes_test.cc);
// row_magnitudes() and quantize_row() run the fastest this CPU has.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt::kernels {

inline constexpr size_t kRowCodeLanes = 16;

void row_magnitudes(const float* w, size_t depth, float* largest, double* sum);
double quantize_row(const float* w, size_t depth, float s, float inverse, int8_t* codes);

void row_magnitudes_portable(const float* w, size_t depth, float* largest, double* sum);
double quantize_row_portable(const float* w, size_t depth, float s, float inverse, int8_t* codes);
#if defined(__x86_64__)
void row_magnitudes_avx512(const float* w, size_t depth, float* largest, double* sum);
double quantize_row_avx512(const float* w, size_t depth, float s, float inverse, int8_t* codes);
void row_magnitudes_avx2(const float* w, size_t depth, float* largest, double* sum);
double quantize_row_avx2(const float* w, size_t depth, float s, float inverse, int8_t* codes);
#endif

}  // namespace edgemt::kernels
