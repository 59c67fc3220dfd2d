// Linear: y = x · Wᵀ + b, on one of three backends chosen at load:
//   * create(): f32 weights on XNNPACK's fully_connected_nc_f32;
//   * create_f16(): f16 weights on XNNPACK's f16 GEMM (layers/f16_linear.h,
//     CPUs with fp16 arithmetic), which needs a LinearScratch at run time;
//   * create_int8(): Int8PerRowDynamic weights on the own int8 GEMM
//     (layers/int8_linear.h), which needs a LinearScratch at run time;
//   * create_packed_f32(): f32 weights on the own f32 GEMM
//     (layers/packed_f32_linear.h), XNNPACK's bits, its pack readable row by
//     row (a tied output projection that also serves the embedding).
//
// Load phase: create*() packs W [out, in] and b [out] into the backend's own
// buffers (the source may be freed afterwards). Run phase: run() works on
// caller memory and never allocates; XNNPACK does not keep the pointers. The
// input needs XNN_EXTRA_BYTES readable past its end (arena buffers have
// them). Not thread-safe per instance: one Translator owns it.
//
// Threads: XNNPACK operators run without a pthreadpool, on the thread that
// calls them. For a Linear created for threads > 1 the f32 (and f16) GEMM is
// one XNNPACK operator per block of output columns (column_blocks()), each
// writing its own columns of y, run as chunks on the edgemt ThreadPool.
// Each output element is the same dot product in the same order whichever
// block computes it (XNNPACK's micro-kernels tile N without changing the
// K loop), so y is bit-identical for any block count
// (tests/runtime/layers/linear_test.cc checks it).
#pragma once

#include <cstddef>

#include "core/parallel.h"
#include "edgemt/status.h"
#include "layers/column_blocks.h"
#include "layers/f16_linear.h"
#include "layers/int8_linear.h"
#include "layers/linear_scratch.h"
#include "layers/packed_f32_linear.h"

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
  // is fused into the GEMM's output clamp. `threads`: the run phase's
  // threads (sets the column blocks; 1: one operator).
  [[nodiscard]] Status create(const float* weight, const float* bias, size_t in_features,
                              size_t out_features, bool relu, size_t threads = 1);

  // weight: [out, in] IEEE half, bias: [out] f32 or nullptr. Errors as
  // F16Linear::create (kUnsupported: no f16 GEMM on this CPU).
  [[nodiscard]] Status create_f16(const uint16_t* weight, const float* bias, size_t in_features,
                                  size_t out_features, bool relu, size_t threads = 1);

  // weight: [out, in] f32, bias: [out] f32 or nullptr, on the own f32 GEMM.
  // kUnsupported on CPUs without a fast own kernel: use create() there.
  [[nodiscard]] Status create_packed_f32(const float* weight, const float* bias,
                                         size_t in_features, size_t out_features,
                                         bool relu = false);
  // The same from a matrix read in place, packed a part at a time
  // (PackedF32Linear::create(rows, ...)), without ReLU.
  [[nodiscard]] Status create_packed_f32(const UnpackedF32Linear& rows);

  // Load phase, after create*(): the input is a ReLU's output, whose zeros
  // an int8 matrix and an f32 one on the own GEMM skip (Int8Linear:: and
  // PackedF32Linear::set_sparse_input: the same y). Nothing for other
  // backends; returns whether it is on.
  bool set_sparse_input() {
    if (is_int8()) return int8_.set_sparse_input();
    return is_packed_f32() && packed_f32_.set_sparse_input();
  }
  bool sparse_input() const {
    return (is_int8() && int8_.sparse_input()) || (is_packed_f32() && packed_f32_.sparse_input());
  }

  // weight: [out, in] int8, scale: [out] (Int8PerRowDynamic), bias: [out]
  // or nullptr; full activation codes. input_multiplier: [in], the
  // matrix's smoothing vector in a smoothed int8 file (copied), or nullptr.
  // tensor_range: activations quantized with one range per product
  // (Int8PerTensorDynamic files) instead of one per row; fixed_range > 0:
  // with that fixed multiplier (Int8PerTensorStatic files). marian_lanes:
  // Marian's saturating sums for those two (Int8Linear::set_marian_sums).
  // Errors as Int8Linear::create, set_input_multiplier, set_fixed_range
  // and set_marian_sums.
  [[nodiscard]] Status create_int8(const int8_t* weight, const float* scale, const float* bias,
                                   size_t in_features, size_t out_features, bool relu,
                                   const float* input_multiplier = nullptr,
                                   bool tensor_range = false, float fixed_range = 0.0f,
                                   int32_t marian_lanes = 0);

  // x: [rows, in] (row stride in_features), y: [rows, out]. int8 and f16
  // Linears convert x into `scratch` (kFailedPrecondition without enough).
  // Column blocks (f32, f16) and the own int8 GEMM's tiles are split over
  // parallel.pool only when the work is worth it (core/parallel.h).
  [[nodiscard]] Status run(const float* x, size_t rows, float* y, const Parallel& parallel,
                           const LinearScratch* scratch = nullptr) const;

  size_t in_features() const { return in_; }
  size_t out_features() const { return out_; }
  bool is_int8() const { return int8_.out_features() != 0; }
  bool is_f16() const { return !f16_.empty(); }
  bool is_packed_f32() const { return packed_f32_.out_features() != 0; }
  // XNNPACK operators the f32 GEMM is split into (1 for int8 and f16 Linears).
  size_t column_blocks() const { return blocks_.count; }
  // Bytes of packed weights this Linear holds (XNNPACK's f32 copy or the int8 pack).
  size_t packed_bytes() const;
  // The int8 kernel's name ("avx512-vnni", "neon-dotprod", ...; see
  // kernels/int8_gemm.h), nullptr for an f32 Linear.
  const char* int8_kernel_name() const { return is_int8() ? int8_.kernel_name() : nullptr; }
  // Whether this is an int8 Linear whose run() quantizes its input with one
  // range for all rows (Int8PerTensorDynamic: Marian's intgemm8 arithmetic).
  bool int8_tensor_range() const { return is_int8() && int8_.tensor_range(); }
  // The packed int8 weights (int8 Linears only).
  const kernels::int8::PackedWeights& int8_packed() const { return int8_.packed(); }
  // The own f32 pack (create_packed_f32 Linears only).
  const kernels::f32::PackedWeights& f32_packed() const { return packed_f32_.packed(); }
  // The int8 product (int8 Linears only), e.g. to run it on some columns.
  const Int8Linear& int8_linear() const { return int8_; }

 private:
  void reset();
  void adopt_packed_f32(PackedF32Linear packed, size_t in_features, size_t out_features);

  ColumnBlocks blocks_;
  xnn_operator* ops_[kMaxColumnBlocks] = {};  // [blocks_.count], f32 only
  Int8Linear int8_;
  F16Linear f16_;
  PackedF32Linear packed_f32_;
  size_t in_ = 0;
  size_t out_ = 0;
};

}  // namespace edgemt
