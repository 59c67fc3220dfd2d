// F16Linear: y = x · Wᵀ + b with W in IEEE half, on XNNPACK's
// fully_connected_nc_f16, for CPUs with fp16 arithmetic (ARMv8.2 FP16, e.g.
// Cortex-A76), where it runs at native speed on half the bytes of f32.
// Elsewhere f16 files are widened to f32 at load instead (models/transformer/weights.cc).
//
// The layers around it stay f32: run() converts x to half, runs the f16 GEMM
// (XNNPACK accumulates in f16 there) and widens y back, all with XNNPACK
// operators on the caller's LinearScratch. Load phase: create() lets XNNPACK
// pack W straight from the file's half bytes; the bias is rounded to half.
// Threads: created for threads > 1, the GEMM and the widening of y are one
// XNNPACK operator pair per column block (layers/column_blocks.h), run as
// chunks on the edgemt ThreadPool; the narrowing of x runs on the caller.
// Not thread-safe per instance: one Translator owns it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/parallel.h"
#include "edgemt/status.h"
#include "layers/column_blocks.h"
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
  // `threads`: the run phase's threads (sets the column blocks).
  [[nodiscard]] Status create(const uint16_t* weight, const float* bias, size_t in_features,
                              size_t out_features, bool relu, size_t threads = 1);

  // x: [rows, in] f32, y: [rows, out] f32.
  [[nodiscard]] Status run(const float* x, size_t rows, float* y, const Parallel& parallel,
                           const LinearScratch& scratch) const;

  bool empty() const { return gemm_[0] == nullptr; }
  size_t in_features() const { return in_; }
  size_t out_features() const { return out_; }

 private:
  void reset();

  ColumnBlocks blocks_;
  xnn_operator* to_half_ = nullptr;                     // f32 [rows, in] -> f16
  xnn_operator* gemm_[kMaxColumnBlocks] = {};      // f16 [rows, in] -> f16 [rows, block]
  xnn_operator* to_float_[kMaxColumnBlocks] = {};  // f16 [rows, block] -> f32 (stride out)
  size_t in_ = 0;
  size_t out_ = 0;
};

}  // namespace edgemt
