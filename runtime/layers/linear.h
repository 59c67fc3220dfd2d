// Linear: y = x · Wᵀ + b on XNNPACK's fully_connected_nc_f32.
//
// Load phase: create() packs W [out, in] and b [out] into XNNPACK's own
// buffers (the source may be freed afterwards). Run phase: run() sets up and
// runs the operator on caller memory; XNNPACK neither allocates nor keeps the
// pointers. The input needs XNN_EXTRA_BYTES readable past its end (arena
// buffers have them). Not thread-safe per instance: one Translator owns it.
#pragma once

#include <pthreadpool.h>

#include <cstddef>

#include "edgemt/status.h"

struct xnn_operator;

namespace edgemt {

class Linear {
 public:
  Linear() = default;
  ~Linear();
  Linear(const Linear&) = delete;
  Linear& operator=(const Linear&) = delete;
  Linear(Linear&& other) noexcept;
  Linear& operator=(Linear&& other) noexcept;

  // weight: [out, in] f32, bias: [out] f32 or nullptr. With `relu` the ReLU
  // is fused into the GEMM's output clamp.
  [[nodiscard]] Status create(const float* weight, const float* bias, size_t in_features,
                              size_t out_features, bool relu);

  // x: [rows, in] (row stride in_features), y: [rows, out].
  [[nodiscard]] Status run(const float* x, size_t rows, float* y, pthreadpool_t pool) const;

  size_t in_features() const { return in_; }
  size_t out_features() const { return out_; }

 private:
  xnn_operator* op_ = nullptr;
  size_t in_ = 0;
  size_t out_ = 0;
};

}  // namespace edgemt
