#include "layers/linear.h"

#if EDGEMT_WITH_XNNPACK
#include <xnnpack.h>
#endif

#include <atomic>
#include <limits>
#include <utility>

namespace edgemt {

Linear::~Linear() { reset(); }

void Linear::reset() {
  for (xnn_operator*& op : ops_) {
#if EDGEMT_WITH_XNNPACK
    if (op != nullptr) (void)xnn_delete_operator(op);
#endif
    op = nullptr;
  }
  blocks_ = ColumnBlocks();
  int8_ = Int8Linear();
  f16_ = F16Linear();
  packed_f32_ = PackedF32Linear();
}

Linear::Linear(Linear&& other) noexcept
    : blocks_(other.blocks_),
      int8_(std::move(other.int8_)),
      f16_(std::move(other.f16_)),
      packed_f32_(std::move(other.packed_f32_)),
      in_(other.in_),
      out_(other.out_) {
  for (size_t b = 0; b < kMaxColumnBlocks; ++b) ops_[b] = std::exchange(other.ops_[b], nullptr);
  other.blocks_ = ColumnBlocks();
}

Linear& Linear::operator=(Linear&& other) noexcept {
  if (this != &other) {
    reset();
    blocks_ = std::exchange(other.blocks_, ColumnBlocks());
    for (size_t b = 0; b < kMaxColumnBlocks; ++b) ops_[b] = std::exchange(other.ops_[b], nullptr);
    int8_ = std::move(other.int8_);
    f16_ = std::move(other.f16_);
    packed_f32_ = std::move(other.packed_f32_);
    in_ = other.in_;
    out_ = other.out_;
  }
  return *this;
}

size_t Linear::packed_bytes() const {
  // XNNPACK packs W (and the bias) as f32; its block padding is not visible.
  if (ops_[0] != nullptr) return (in_ + 1) * out_ * sizeof(float);
  if (is_f16()) return (in_ + 1) * out_ * sizeof(uint16_t);
  if (is_packed_f32()) return packed_f32_.packed_bytes();
  return int8_.packed_bytes();
}

Status Linear::create(const float* weight, const float* bias, size_t in_features,
                      size_t out_features, bool relu, size_t threads) {
#if !EDGEMT_WITH_XNNPACK
  // No XNNPACK in this build (WebAssembly): the own f32 GEMM, XNNPACK's bits.
  (void)threads;
  return create_packed_f32(weight, bias, in_features, out_features, relu);
#else
  const float output_min = relu ? 0.0f : -std::numeric_limits<float>::infinity();
  const float output_max = std::numeric_limits<float>::infinity();
  const ColumnBlocks blocks =
      ColumnBlocks::make(out_features, threads, (in_features + 1) * out_features * sizeof(float));
  xnn_operator_t ops[kMaxColumnBlocks] = {};
  xnn_status status = xnn_status_success;
  for (size_t b = 0; b < blocks.count && status == xnn_status_success; ++b) {
    // Block b: W rows [start, end) (each `in` long), bias [start, end);
    // it reads x rows of stride in and writes y rows of stride out.
    const size_t start = blocks.start[b];
    status = xnn_create_fully_connected_nc_f32(in_features, blocks.columns(b), in_features,
                                               out_features, weight + start * in_features,
                                               bias != nullptr ? bias + start : nullptr, output_min,
                                               output_max, 0, &ops[b]);
  }
  if (status != xnn_status_success) {
    for (xnn_operator_t op : ops) {
      if (op != nullptr) (void)xnn_delete_operator(op);
    }
    return Status::error(StatusCode::kBackendError,
                         "XNNPACK fully_connected create failed (status %d, %zux%zu)",
                         static_cast<int>(status), out_features, in_features);
  }
  reset();
  blocks_ = blocks;
  for (size_t b = 0; b < kMaxColumnBlocks; ++b) ops_[b] = ops[b];
  in_ = in_features;
  out_ = out_features;
  return Status::ok();
#endif  // EDGEMT_WITH_XNNPACK
}

Status Linear::create_f16(const uint16_t* weight, const float* bias, size_t in_features,
                          size_t out_features, bool relu, size_t threads) {
  F16Linear f16;
  EDGEMT_RETURN_IF_ERROR(f16.create(weight, bias, in_features, out_features, relu, threads));
  reset();
  f16_ = std::move(f16);
  in_ = in_features;
  out_ = out_features;
  return Status::ok();
}

Status Linear::create_packed_f32(const float* weight, const float* bias, size_t in_features,
                                 size_t out_features, bool relu) {
  PackedF32Linear packed;
  EDGEMT_RETURN_IF_ERROR(packed.create(weight, bias, in_features, out_features, relu));
  adopt_packed_f32(std::move(packed), in_features, out_features);
  return Status::ok();
}

Status Linear::create_packed_f32(const UnpackedF32Linear& rows) {
  PackedF32Linear packed;
  EDGEMT_RETURN_IF_ERROR(packed.create(rows, false));
  adopt_packed_f32(std::move(packed), rows.in_features(), rows.out_features());
  return Status::ok();
}

void Linear::adopt_packed_f32(PackedF32Linear packed, size_t in_features, size_t out_features) {
  reset();
  packed_f32_ = std::move(packed);
  in_ = in_features;
  out_ = out_features;
}

Status Linear::create_int8(const int8_t* weight, const float* scale, const float* bias,
                           size_t in_features, size_t out_features, bool relu,
                           const float* input_multiplier, bool tensor_range,
                           float fixed_range, int32_t marian_lanes) {
  Int8Linear int8;
  // Full activation codes: narrow ones cost int8 models up to 1.4 BLEU on
  // real Marian models (docs/int8-quality.md; kernels/int8_gemm.h).
  EDGEMT_RETURN_IF_ERROR(int8.create(weight, scale, bias, in_features, out_features, relu,
                                     kernels::int8::kFullCodes));
  if (input_multiplier != nullptr) EDGEMT_RETURN_IF_ERROR(int8.set_input_multiplier(input_multiplier));
  int8.set_tensor_range(tensor_range);
  if (fixed_range != 0.0f) EDGEMT_RETURN_IF_ERROR(int8.set_fixed_range(fixed_range));
  EDGEMT_RETURN_IF_ERROR(int8.set_marian_sums(marian_lanes));
  reset();
  int8_ = std::move(int8);
  in_ = in_features;
  out_ = out_features;
  return Status::ok();
}

#if EDGEMT_WITH_XNNPACK
namespace {

// One column block of an f32 GEMM: y[:, start:end] = x · W[start:end]ᵀ + b.
xnn_status run_block(xnn_operator_t op, size_t rows, const float* x, float* y) {
  const xnn_status status = xnn_setup_fully_connected_nc_f32(op, rows, x, y, nullptr);
  return status == xnn_status_success ? xnn_run_operator(op, nullptr) : status;
}

}  // namespace
#endif  // EDGEMT_WITH_XNNPACK

Status Linear::run(const float* x, size_t rows, float* y, const Parallel& parallel,
                   const LinearScratch* scratch) const {
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
    return f16_.run(x, rows, y, parallel, *scratch);
  }
  if (is_packed_f32()) {
    packed_f32_.run(x, rows, y, parallel);
    return Status::ok();
  }
#if !EDGEMT_WITH_XNNPACK
  return Status::error(StatusCode::kFailedPrecondition, "Linear run before create");
#else
  xnn_status status = xnn_status_success;
  const size_t gemm_nanoseconds = xnnpack_gemm_nanoseconds(rows, in_, out_);
  if (blocks_.count > 1 && parallel.worth(gemm_nanoseconds)) {
    struct Context {
      const Linear* self;
      size_t rows;
      const float* x;
      float* y;
      std::atomic<int> failed;
    } context{this, rows, x, y, {xnn_status_success}};
    parallel.pool->run(
        blocks_.count,
        [](void* opaque, size_t b, size_t) {
          Context& c = *static_cast<Context*>(opaque);
          const xnn_status s = run_block(c.self->ops_[b], c.rows, c.x, c.y + c.self->blocks_.start[b]);
          if (s != xnn_status_success) c.failed.store(static_cast<int>(s), std::memory_order_relaxed);
        },
        &context, gemm_nanoseconds);
    status = static_cast<xnn_status>(context.failed.load(std::memory_order_relaxed));
  } else {
    for (size_t b = 0; b < blocks_.count && status == xnn_status_success; ++b) {
      status = run_block(ops_[b], rows, x, y + blocks_.start[b]);
    }
  }
  if (status != xnn_status_success) {
    return Status::error(StatusCode::kBackendError,
                         "XNNPACK fully_connected run failed (status %d)", static_cast<int>(status));
  }
  return Status::ok();
#endif  // EDGEMT_WITH_XNNPACK
}

}  // namespace edgemt
