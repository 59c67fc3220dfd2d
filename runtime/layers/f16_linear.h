// F16Linear: y = x · Wᵀ + b with W in IEEE half, on XNNPACK's
// fully_connected_nc_f16, for CPUs with fp16 arithmetic (ARMv8.2 FP16, e.g.
// Cortex-A76), where it runs at native speed on half the bytes of f32.
// Elsewhere f16 files are widened to f32 at load instead (models/transformer/weights.cc).
//
// The layers around it stay f32: run() converts x to half, runs the f16 GEMM
// (XNNPACK accumulates in f16 there) and widens y back, all with XNNPACK
// operators on the caller's LinearScratch. Load phase: create() lets XNNPACK
// pack W straight from the file's half bytes; the bias is rounded to half.
// Not thread-safe per instance: one Translator owns it.
#pragma once

#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>

#include "edgemt/status.h"
#include "layers/linear_scratch.h"

struct xnn_operator;

namespace edgemt {

class F16Linear {
 public:
  F16Linear() = default;
  ~F16Linear();
  F16Linear(const F16Linear&) = delete;
  F16Linear& operator=(const F16Linear&) = delete;
  F16Linear(F16Linear&& other) noexcept;
  F16Linear& operator=(F16Linear&& other) noexcept;

  // weight: [out, in] half; bias: [out] f32 or nullptr. With `relu` the ReLU
  // is the GEMM's output clamp. Errors: kUnsupported (XNNPACK has no f16
  // GEMM for this CPU), kOutOfMemory, kBackendError.
  [[nodiscard]] Status create(const uint16_t* weight, const float* bias, size_t in_features,
                              size_t out_features, bool relu);

  // x: [rows, in] f32, y: [rows, out] f32.
  [[nodiscard]] Status run(const float* x, size_t rows, float* y, pthreadpool_t pool,
                           const LinearScratch& scratch) const;

  bool empty() const { return gemm_ == nullptr; }
  size_t in_features() const { return in_; }
  size_t out_features() const { return out_; }

 private:
  void reset();

  xnn_operator* to_half_ = nullptr;   // f32 [rows, in] -> f16
  xnn_operator* gemm_ = nullptr;      // f16 [rows, in] -> f16 [rows, out]
  xnn_operator* to_float_ = nullptr;  // f16 [rows, out] -> f32
  size_t in_ = 0;
  size_t out_ = 0;
};

}  // namespace edgemt
