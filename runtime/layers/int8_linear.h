// Int8Linear: y = x · Wᵀ + b for a matrix stored in the Int8PerRowDynamic
// scheme (schema/edgemt.fbs), on the own int8 GEMM (kernels/int8_gemm.h):
// each input row is quantized on the fly with its own scale, the product is
// summed exactly in int32 and scaled back to f32 with the weight row scales.
//
// Load phase: create() packs W [out, in] int8 + scale [out] + bias [out]
// into one buffer of its own (int8: a quarter of the f32 bytes) and picks the
// fastest kernel this CPU runs. Its `code_limit` is the activation codes'
// range, kernels::int8::kFullCodes (127, int8 models) or kNarrowCodes (64;
// kernels/int8_gemm.h says why there are two). A smoothed int8 file gives a
// matrix an input multiplier m [in] (schema/TENSORS.md, "Int8 files"): the
// file's W was multiplied by 1/m column by column before quantization, and
// each input row is multiplied by m before it is quantized, which moves an
// activation channel's outliers into the weights (SmoothQuant).
// Run phase: run() quantizes x into the
// caller's scratch and runs the kernel on the thread pool, split by output
// columns; no allocation, and the same bits for any thread count or kernel.
// Not thread-safe per instance: one Translator owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/parallel.h"
#include "edgemt/status.h"
#include "kernels/int8_gemm.h"
#include "layers/linear_scratch.h"
#include "layers/packed_matrix.h"

namespace edgemt {

class Int8Linear {
 public:
  // weight: [out, in] int8 in [-127, 127]; scale: [out]; bias: [out] or
  // nullptr. With `relu` the ReLU is applied in the GEMM's epilogue.
  // Errors: kInvalidModel (a weight of -128, a non-finite or negative scale),
  // kInvalidArgument (a code_limit other than the two), kOutOfMemory.
  [[nodiscard]] Status create(const int8_t* weight, const float* scale, const float* bias,
                              size_t in_features, size_t out_features, bool relu,
                              int32_t code_limit);

  // The same from weight rows and their scales made on demand
  // (kernels::int8::pack_weights_from: 16 rows at a time, in order, the
  // scales written into `scale` [out]), so the whole int8 matrix never
  // exists outside the pack. Same errors (the scales checked once made).
  [[nodiscard]] Status create_from_rows(kernels::int8::RowSource source, void* context,
                                        float* scale, const float* bias, size_t in_features,
                                        size_t out_features, bool relu, int32_t code_limit);

  // multiplier: [in_features] finite, > 0 values, copied (after create);
  // all ones is the same as none and is not kept. kInvalidModel for a
  // value that is not, kOutOfMemory.
  [[nodiscard]] Status set_input_multiplier(const float* multiplier);

  // Whether run() quantizes its input with one range for all rows
  // (kernels::int8::quantize_tensor: Marian's intgemm8 arithmetic, the
  // Int8PerTensorDynamic scheme) instead of one per row; off after create.
  void set_tensor_range(bool on) { tensor_range_ = on; }
  bool tensor_range() const { return tensor_range_; }

  // A fixed activation range (kernels::int8::quantize_fixed: the
  // Int8PerTensorStatic scheme): run() quantizes x · inverse, whatever x's
  // range, the weight scales hold the whole dequantization, and the sums
  // are Marian's shifted ones (GemmArgs::sum_shift 127; the bias holds
  // Marian's correction). inverse must be finite and > 0 (kInvalidModel);
  // none after create.
  [[nodiscard]] Status set_fixed_range(float inverse);
  float fixed_range() const { return fixed_inverse_; }

  // Marian's sums as its intgemm forms them on a CPU without VNNI (kernels/
  // int8_gemm_marian.h): `lanes` 8, 16 or 32 (SSSE3, AVX2, AVX-512 BW), or
  // 0 for exact sums (after create). Only for Marian's arithmetic, after
  // set_tensor_range(true) or set_fixed_range(): kInvalidArgument otherwise,
  // and for another lane count. Turns the zero-skipping kernel off (its
  // sums are exact).
  [[nodiscard]] Status set_marian_sums(int32_t lanes);
  int32_t marian_sums() const { return saturating_lanes_; }

  // Load phase: the input is a ReLU's output (a feed-forward block's second
  // matrix), so run() takes the zero-skipping kernel (kernels/
  // int8_gemm_sparse.h) when at most one group of 4 codes in
  // kSparseGroupsPerNonzero is not all zero: the same y. Nothing where this
  // build has no such kernel; returns whether it is on.
  bool set_sparse_input();
  bool sparse_input() const { return sparse_kernel_ != nullptr; }

  // x: [rows, in] (row stride in_features), y: [rows, out]. Quantization
  // and GEMM are split over parallel.pool when the work is worth it.
  [[nodiscard]] Status run(const float* x, size_t rows, float* y, const Parallel& parallel,
                           const LinearScratch& scratch) const;
  // The same product on `columns`, a pack of some of this matrix's columns
  // (kernels/column_gather.h): y [rows, columns.columns] holds exactly
  // those columns of run()'s y; rows y_stride floats apart (0: as many as
  // the columns), so a part of a wider output can be written in place.
  [[nodiscard]] Status run_columns(const float* x, size_t rows, float* y,
                                   const Parallel& parallel, const LinearScratch& scratch,
                                   const kernels::int8::PackedWeights& columns,
                                   size_t y_stride = 0) const;

  size_t in_features() const { return packed_.view().depth; }
  size_t out_features() const { return packed_.view().columns; }
  size_t packed_bytes() const { return packed_.bytes(); }
  const kernels::int8::PackedWeights& packed() const { return packed_.view(); }
  // The pack's codes, for an owner that rearranges them in place and puts
  // them back (ArgmaxShortcut::set_rows); run() reads them as a pack.
  int8_t* mutable_codes() { return static_cast<int8_t*>(packed_.data()); }
  const char* kernel_name() const { return kernel_.name; }
  int32_t code_limit() const { return code_limit_; }
  const float* input_multiplier() const { return multiplier_.get(); }

 private:
  static constexpr size_t kSparseGroupsPerNonzero = 4;

  PackedMatrix<kernels::int8::PackedWeights> packed_;
  std::unique_ptr<float[]> multiplier_;  // [in], or empty
  kernels::int8::GemmVariant kernel_;
  kernels::int8::GemmKernel sparse_kernel_ = nullptr;  // set_sparse_input()
  bool relu_ = false;
  int32_t code_limit_ = kernels::int8::kFullCodes;
  bool tensor_range_ = false;
  float fixed_inverse_ = 0.0f;  // 0: none
  int32_t saturating_lanes_ = 0;  // set_marian_sums(); 0: exact
  kernels::int8::GemmKernel marian_kernel_ = nullptr;  // its kernel, chosen then
};

}  // namespace edgemt
