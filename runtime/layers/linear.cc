#include "layers/linear.h"

#include <xnnpack.h>

#include <limits>
#include <utility>

namespace edgemt {

Linear::~Linear() {
  if (op_ != nullptr) (void)xnn_delete_operator(op_);
}

Linear::Linear(Linear&& other) noexcept
    : op_(std::exchange(other.op_, nullptr)), in_(other.in_), out_(other.out_) {}

Linear& Linear::operator=(Linear&& other) noexcept {
  if (this != &other) {
    if (op_ != nullptr) (void)xnn_delete_operator(op_);
    op_ = std::exchange(other.op_, nullptr);
    in_ = other.in_;
    out_ = other.out_;
  }
  return *this;
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
  if (op_ != nullptr) (void)xnn_delete_operator(op_);
  op_ = op;
  in_ = in_features;
  out_ = out_features;
  return Status::ok();
}

Status Linear::run(const float* x, size_t rows, float* y, pthreadpool_t pool) const {
  if (rows == 0) return Status::ok();
  xnn_status status = xnn_setup_fully_connected_nc_f32(op_, rows, x, y, pool);
  if (status == xnn_status_success) status = xnn_run_operator(op_, pool);
  if (status != xnn_status_success) {
    return Status::error(StatusCode::kBackendError,
                         "XNNPACK fully_connected run failed (status %d)", static_cast<int>(status));
  }
  return Status::ok();
}

}  // namespace edgemt
