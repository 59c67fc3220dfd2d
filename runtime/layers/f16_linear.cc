#include "layers/f16_linear.h"

#if EDGEMT_WITH_XNNPACK
#include <xnnpack.h>
#endif

#include <atomic>
#include <limits>
#include <memory>
#include <new>
#include <utility>

#include "kernels/fp16.h"

namespace edgemt {

#if !EDGEMT_WITH_XNNPACK
// A build without XNNPACK (WebAssembly) has no f16 GEMM: f16 files are
// widened to f32 at load, as on CPUs without fp16 arithmetic
// (models/matrix_loader.cc never asks for one there).
F16Linear::~F16Linear() = default;
void F16Linear::reset() { blocks_ = ColumnBlocks(); }
F16Linear::F16Linear(F16Linear&& other) noexcept { *this = std::move(other); }
F16Linear& F16Linear::operator=(F16Linear&& other) noexcept {
  blocks_ = std::exchange(other.blocks_, ColumnBlocks());
  in_ = other.in_;
  out_ = other.out_;
  return *this;
}
Status F16Linear::create(const uint16_t*, const float*, size_t, size_t, bool, size_t) {
  return Status::error(StatusCode::kUnsupported, "this build has no f16 GEMM");
}
Status F16Linear::run(const float*, size_t, float*, const Parallel&, const LinearScratch&) const {
  return Status::error(StatusCode::kFailedPrecondition, "this build has no f16 GEMM");
}
#else
F16Linear::~F16Linear() { reset(); }

void F16Linear::reset() {
  if (to_half_ != nullptr) (void)xnn_delete_operator(to_half_);
  to_half_ = nullptr;
  for (size_t b = 0; b < kMaxColumnBlocks; ++b) {
    if (gemm_[b] != nullptr) (void)xnn_delete_operator(gemm_[b]);
    if (to_float_[b] != nullptr) (void)xnn_delete_operator(to_float_[b]);
    gemm_[b] = to_float_[b] = nullptr;
  }
  blocks_ = ColumnBlocks();
}

F16Linear::F16Linear(F16Linear&& other) noexcept { *this = std::move(other); }

F16Linear& F16Linear::operator=(F16Linear&& other) noexcept {
  if (this != &other) {
    reset();
    blocks_ = std::exchange(other.blocks_, ColumnBlocks());
    to_half_ = std::exchange(other.to_half_, nullptr);
    for (size_t b = 0; b < kMaxColumnBlocks; ++b) {
      gemm_[b] = std::exchange(other.gemm_[b], nullptr);
      to_float_[b] = std::exchange(other.to_float_[b], nullptr);
    }
    in_ = other.in_;
    out_ = other.out_;
  }
  return *this;
}

Status F16Linear::create(const uint16_t* weight, const float* bias, size_t in_features,
                         size_t out_features, bool relu, size_t threads) {
  std::unique_ptr<uint16_t[]> half_bias;
  if (bias != nullptr) {
    half_bias.reset(new (std::nothrow) uint16_t[out_features]);
    if (!half_bias) return Status::error(StatusCode::kOutOfMemory, "cannot round a bias to f16");
    for (size_t i = 0; i < out_features; ++i) half_bias[i] = kernels::f32_to_f16(bias[i]);
  }
  F16Linear made;
  made.blocks_ =
      ColumnBlocks::make(out_features, threads, (in_features + 1) * out_features * sizeof(uint16_t));
  const float output_min = relu ? 0.0f : -std::numeric_limits<float>::infinity();
  xnn_status status = xnn_status_success;
  for (size_t b = 0; b < made.blocks_.count && status == xnn_status_success; ++b) {
    const size_t start = made.blocks_.start[b], columns = made.blocks_.columns(b);
    status = xnn_create_fully_connected_nc_f16(
        in_features, columns, in_features, out_features, weight + start * in_features,
        half_bias ? half_bias.get() + start : nullptr, output_min,
        std::numeric_limits<float>::infinity(), 0, &made.gemm_[b]);
    if (status == xnn_status_success) {
      status = xnn_create_convert_nc_f16_f32(columns, out_features, out_features, 0, &made.to_float_[b]);
    }
  }
  if (status == xnn_status_unsupported_hardware) {
    return Status::error(StatusCode::kUnsupported, "XNNPACK has no f16 GEMM for this CPU");
  }
  if (status == xnn_status_success) {
    status = xnn_create_convert_nc_f32_f16(in_features, in_features, in_features, 0, &made.to_half_);
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

namespace {

// Column block b: the f16 GEMM into its columns of half_output, widened
// into the same columns of y (both of row stride out).
xnn_status run_block(xnn_operator_t gemm, xnn_operator_t to_float, size_t rows, const uint16_t* x,
                     uint16_t* half_y, float* y) {
  xnn_status status = xnn_setup_fully_connected_nc_f16(gemm, rows, x, half_y, nullptr);
  if (status == xnn_status_success) status = xnn_run_operator(gemm, nullptr);
  if (status == xnn_status_success) status = xnn_setup_convert_nc_f16_f32(to_float, rows, half_y, y, nullptr);
  if (status == xnn_status_success) status = xnn_run_operator(to_float, nullptr);
  return status;
}

}  // namespace

Status F16Linear::run(const float* x, size_t rows, float* y, const Parallel& parallel,
                      const LinearScratch& scratch) const {
  if (rows == 0) return Status::ok();
  if (gemm_[0] == nullptr || scratch.half_input == nullptr || rows > scratch.max_rows ||
      in_ > scratch.max_depth || out_ > scratch.max_out) {
    return Status::error(StatusCode::kFailedPrecondition,
                         "f16 Linear run without room for %zu rows of %zu -> %zu (scratch %zu x %zu -> %zu)",
                         rows, in_, out_, scratch.max_rows, scratch.max_depth, scratch.max_out);
  }
  xnn_status status = xnn_setup_convert_nc_f32_f16(to_half_, rows, x, scratch.half_input, nullptr);
  if (status == xnn_status_success) status = xnn_run_operator(to_half_, nullptr);
  const size_t gemm_nanoseconds = xnnpack_gemm_nanoseconds(rows, in_, out_);
  if (status == xnn_status_success && blocks_.count > 1 && parallel.worth(gemm_nanoseconds)) {
    struct Context {
      const F16Linear* self;
      size_t rows;
      const LinearScratch* scratch;
      float* y;
      std::atomic<int> failed;
    } context{this, rows, &scratch, y, {xnn_status_success}};
    parallel.pool->run(
        blocks_.count,
        [](void* opaque, size_t b, size_t) {
          Context& c = *static_cast<Context*>(opaque);
          const size_t start = c.self->blocks_.start[b];
          const xnn_status s = run_block(c.self->gemm_[b], c.self->to_float_[b], c.rows,
                                         c.scratch->half_input, c.scratch->half_output + start,
                                         c.y + start);
          if (s != xnn_status_success) c.failed.store(static_cast<int>(s), std::memory_order_relaxed);
        },
        &context, gemm_nanoseconds);
    status = static_cast<xnn_status>(context.failed.load(std::memory_order_relaxed));
  } else {
    for (size_t b = 0; b < blocks_.count && status == xnn_status_success; ++b) {
      const size_t start = blocks_.start[b];
      status = run_block(gemm_[b], to_float_[b], rows, scratch.half_input,
                         scratch.half_output + start, y + start);
    }
  }
  if (status != xnn_status_success) {
    return Status::error(StatusCode::kBackendError, "XNNPACK f16 fully_connected run failed (status %d)",
                         static_cast<int>(status));
  }
  return Status::ok();
}
#endif  // EDGEMT_WITH_XNNPACK

}  // namespace edgemt
