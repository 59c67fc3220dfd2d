#include "layers/f16_linear.h"

#include <xnnpack.h>

#include <limits>
#include <memory>
#include <new>
#include <utility>

#include "kernels/fp16.h"

namespace edgemt {

F16Linear::~F16Linear() { reset(); }

void F16Linear::reset() {
  for (xnn_operator** op : {&to_half_, &gemm_, &to_float_}) {
    if (*op != nullptr) (void)xnn_delete_operator(*op);
    *op = nullptr;
  }
}

F16Linear::F16Linear(F16Linear&& other) noexcept
    : to_half_(std::exchange(other.to_half_, nullptr)),
      gemm_(std::exchange(other.gemm_, nullptr)),
      to_float_(std::exchange(other.to_float_, nullptr)),
      in_(other.in_),
      out_(other.out_) {}

F16Linear& F16Linear::operator=(F16Linear&& other) noexcept {
  if (this != &other) {
    reset();
    to_half_ = std::exchange(other.to_half_, nullptr);
    gemm_ = std::exchange(other.gemm_, nullptr);
    to_float_ = std::exchange(other.to_float_, nullptr);
    in_ = other.in_;
    out_ = other.out_;
  }
  return *this;
}

Status F16Linear::create(const uint16_t* weight, const float* bias, size_t in_features,
                         size_t out_features, bool relu) {
  std::unique_ptr<uint16_t[]> half_bias;
  if (bias != nullptr) {
    half_bias.reset(new (std::nothrow) uint16_t[out_features]);
    if (!half_bias) return Status::error(StatusCode::kOutOfMemory, "cannot round a bias to f16");
    for (size_t i = 0; i < out_features; ++i) half_bias[i] = kernels::f32_to_f16(bias[i]);
  }
  F16Linear made;
  const float output_min = relu ? 0.0f : -std::numeric_limits<float>::infinity();
  xnn_status status = xnn_create_fully_connected_nc_f16(
      in_features, out_features, in_features, out_features, weight, half_bias.get(), output_min,
      std::numeric_limits<float>::infinity(), 0, &made.gemm_);
  if (status == xnn_status_unsupported_hardware) {
    return Status::error(StatusCode::kUnsupported, "XNNPACK has no f16 GEMM for this CPU");
  }
  if (status == xnn_status_success) {
    status = xnn_create_convert_nc_f32_f16(in_features, in_features, in_features, 0, &made.to_half_);
  }
  if (status == xnn_status_success) {
    status = xnn_create_convert_nc_f16_f32(out_features, out_features, out_features, 0,
                                           &made.to_float_);
  }
  if (status != xnn_status_success) {
    return Status::error(StatusCode::kBackendError,
                         "XNNPACK f16 fully_connected create failed (status %d, %zux%zu)",
                         static_cast<int>(status), out_features, in_features);
  }
  made.in_ = in_features;
  made.out_ = out_features;
  *this = std::move(made);
  return Status::ok();
}

Status F16Linear::run(const float* x, size_t rows, float* y, pthreadpool_t pool,
                      const LinearScratch& scratch) const {
  if (rows == 0) return Status::ok();
  if (gemm_ == nullptr || scratch.half_input == nullptr || rows > scratch.max_rows ||
      in_ > scratch.max_depth || out_ > scratch.max_out) {
    return Status::error(StatusCode::kFailedPrecondition,
                         "f16 Linear run without room for %zu rows of %zu -> %zu (scratch %zu x %zu -> %zu)",
                         rows, in_, out_, scratch.max_rows, scratch.max_depth, scratch.max_out);
  }
  xnn_status status = xnn_setup_convert_nc_f32_f16(to_half_, rows, x, scratch.half_input, pool);
  if (status == xnn_status_success) status = xnn_run_operator(to_half_, pool);
  if (status == xnn_status_success) {
    status = xnn_setup_fully_connected_nc_f16(gemm_, rows, scratch.half_input, scratch.half_output, pool);
  }
  if (status == xnn_status_success) status = xnn_run_operator(gemm_, pool);
  if (status == xnn_status_success) {
    status = xnn_setup_convert_nc_f16_f32(to_float_, rows, scratch.half_output, y, pool);
  }
  if (status == xnn_status_success) status = xnn_run_operator(to_float_, pool);
  if (status != xnn_status_success) {
    return Status::error(StatusCode::kBackendError, "XNNPACK f16 fully_connected run failed (status %d)",
                         static_cast<int>(status));
  }
  return Status::ok();
}

}  // namespace edgemt
