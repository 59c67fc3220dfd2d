#include "layers/linear.h"

#include <xnnpack.h>

#include <limits>
#include <utility>

namespace edgemt {

Linear::~Linear() { reset(); }

void Linear::reset() {
  if (op_ != nullptr) (void)xnn_delete_operator(op_);
  op_ = nullptr;
  int8_ = Int8Linear();
  f16_ = F16Linear();
}

Linear::Linear(Linear&& other) noexcept
    : op_(std::exchange(other.op_, nullptr)),
      int8_(std::move(other.int8_)),
      f16_(std::move(other.f16_)),
      in_(other.in_),
      out_(other.out_) {}

Linear& Linear::operator=(Linear&& other) noexcept {
  if (this != &other) {
    reset();
    op_ = std::exchange(other.op_, nullptr);
    int8_ = std::move(other.int8_);
    f16_ = std::move(other.f16_);
    in_ = other.in_;
    out_ = other.out_;
  }
  return *this;
}

size_t Linear::packed_bytes() const {
  // XNNPACK packs W (and the bias) as f32; its block padding is not visible.
  if (op_ != nullptr) return (in_ + 1) * out_ * sizeof(float);
  if (is_f16()) return (in_ + 1) * out_ * sizeof(uint16_t);
  return int8_.packed_bytes();
}

Status Linear::create(const float* weight, const float* bias, size_t in_features,
                      size_t out_features, bool relu) {
  const float output_min = relu ? 0.0f : -std::numeric_limits<float>::infinity();
  const float output_max = std::numeric_limits<float>::infinity();
  xnn_operator_t op = nullptr;
  const xnn_status status =
      xnn_create_fully_connected_nc_f32(in_features, out_features, in_features, out_features,
                                        weight, bias, output_min, output_max, 0, &op);
  if (status != xnn_status_success) {
    return Status::error(StatusCode::kBackendError,
                         "XNNPACK fully_connected create failed (status %d, %zux%zu)",
                         static_cast<int>(status), out_features, in_features);
  }
  reset();
  op_ = op;
  in_ = in_features;
  out_ = out_features;
  return Status::ok();
}

Status Linear::create_f16(const uint16_t* weight, const float* bias, size_t in_features,
                          size_t out_features, bool relu) {
  F16Linear f16;
  EDGEMT_RETURN_IF_ERROR(f16.create(weight, bias, in_features, out_features, relu));
  reset();
  f16_ = std::move(f16);
  in_ = in_features;
  out_ = out_features;
  return Status::ok();
}

Status Linear::create_int8(const int8_t* weight, const float* scale, const float* bias,
                           size_t in_features, size_t out_features, bool relu) {
  Int8Linear int8;
  EDGEMT_RETURN_IF_ERROR(int8.create(weight, scale, bias, in_features, out_features, relu));
  reset();
  int8_ = std::move(int8);
  in_ = in_features;
  out_ = out_features;
  return Status::ok();
}

Status Linear::run(const float* x, size_t rows, float* y, const Parallel& parallel,
                   const LinearScratch* scratch) const {
  pthreadpool_t pool = parallel.pool;
  if (rows == 0) return Status::ok();
  if (is_int8()) {
    if (scratch == nullptr) {
      return Status::error(StatusCode::kFailedPrecondition, "int8 Linear run without scratch");
    }
    return int8_.run(x, rows, y, parallel, *scratch);
  }
  if (is_f16()) {
    if (scratch == nullptr) {
      return Status::error(StatusCode::kFailedPrecondition, "f16 Linear run without scratch");
    }
    return f16_.run(x, rows, y, pool, *scratch);
  }
  xnn_status status = xnn_setup_fully_connected_nc_f32(op_, rows, x, y, pool);
  if (status == xnn_status_success) status = xnn_run_operator(op_, pool);
  if (status != xnn_status_success) {
    return Status::error(StatusCode::kBackendError,
                         "XNNPACK fully_connected run failed (status %d)", static_cast<int>(status));
  }
  return Status::ok();
}

}  // namespace edgemt
