#include "layers/int8_linear.h"

#include <cmath>
#include <memory>
#include <new>
#include <utility>

#include "core/parallel.h"
#include "kernels/int8_gemm_marian.h"
#include "kernels/int8_gemm_sparse.h"

namespace edgemt {

namespace q8 = kernels::int8;

namespace {

Status check_scales(const float* scale, size_t out_features) {
  for (size_t n = 0; n < out_features; ++n) {
    if (!(scale[n] >= 0.0f) || !std::isfinite(scale[n])) {
      return Status::error(StatusCode::kInvalidModel,
                           "int8 row scale %zu is %g (must be finite and >= 0)", n,
                           static_cast<double>(scale[n]));
    }
  }
  return Status::ok();
}

Status allocate_pack(size_t in_features, size_t out_features,
                     PackedMatrix<q8::PackedWeights>* packed) {
  const size_t bytes = q8::packed_bytes(out_features, in_features);
  if (!packed->allocate(bytes)) {  // written in full by the packer
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate %zu bytes for int8 weights", bytes);
  }
  return Status::ok();
}

Status check_code_limit(int32_t code_limit) {
  if (code_limit != q8::kFullCodes && code_limit != q8::kNarrowCodes) {
    return Status::error(StatusCode::kInvalidArgument,
                         "int8 activation code limit %d (must be %d or %d)", static_cast<int>(code_limit),
                         static_cast<int>(q8::kNarrowCodes), static_cast<int>(q8::kFullCodes));
  }
  return Status::ok();
}

Status weight_of_minus_128(size_t in_features, size_t out_features) {
  return Status::error(StatusCode::kInvalidModel,
                       "int8 weight of -128 in a %zux%zu matrix (the scheme uses [-127, 127])",
                       out_features, in_features);
}

}  // namespace

Status Int8Linear::create(const int8_t* weight, const float* scale, const float* bias,
                          size_t in_features, size_t out_features, bool relu,
                          int32_t code_limit) {
  EDGEMT_RETURN_IF_ERROR(check_code_limit(code_limit));
  EDGEMT_RETURN_IF_ERROR(check_scales(scale, out_features));
  PackedMatrix<q8::PackedWeights> packed;
  EDGEMT_RETURN_IF_ERROR(allocate_pack(in_features, out_features, &packed));
  if (!q8::pack_weights(weight, scale, bias, out_features, in_features, packed.data(), packed.mutable_view())) {
    return weight_of_minus_128(in_features, out_features);
  }
  packed_ = std::move(packed);
  kernel_ = q8::best_gemm_kernel();
  relu_ = relu;
  code_limit_ = code_limit;
  tensor_range_ = false;
  fixed_inverse_ = 0.0f;
  multiplier_.reset();
  return Status::ok();
}

Status Int8Linear::create_from_rows(q8::RowSource source, void* context, float* scale,
                                    const float* bias, size_t in_features, size_t out_features,
                                    bool relu, int32_t code_limit) {
  EDGEMT_RETURN_IF_ERROR(check_code_limit(code_limit));
  PackedMatrix<q8::PackedWeights> packed;
  EDGEMT_RETURN_IF_ERROR(allocate_pack(in_features, out_features, &packed));
  std::unique_ptr<int8_t[]> rows(new (std::nothrow) int8_t[q8::kBlockColumns * in_features]);
  if (!rows) return Status::error(StatusCode::kOutOfMemory, "cannot allocate int8 packing rows");
  if (!q8::pack_weights_from(source, context, scale, bias, out_features, in_features, rows.get(),
                             packed.data(), packed.mutable_view())) {
    return weight_of_minus_128(in_features, out_features);
  }
  EDGEMT_RETURN_IF_ERROR(check_scales(scale, out_features));  // as the source made them
  packed_ = std::move(packed);
  kernel_ = q8::best_gemm_kernel();
  relu_ = relu;
  code_limit_ = code_limit;
  tensor_range_ = false;
  fixed_inverse_ = 0.0f;
  multiplier_.reset();
  return Status::ok();
}

Status Int8Linear::set_fixed_range(float inverse) {
  if (!(inverse > 0.0f) || !std::isfinite(inverse)) {
    return Status::error(StatusCode::kInvalidModel,
                         "int8 input scale %g is not a finite value > 0", static_cast<double>(inverse));
  }
  fixed_inverse_ = inverse;
  return Status::ok();
}

Status Int8Linear::set_input_multiplier(const float* multiplier) {
  const size_t in = in_features();
  bool ones = true;
  for (size_t k = 0; k < in; ++k) {
    if (!(multiplier[k] > 0.0f) || !std::isfinite(multiplier[k])) {
      return Status::error(StatusCode::kInvalidModel,
                           "int8 input multiplier %zu is %g (must be finite and > 0)", k,
                           static_cast<double>(multiplier[k]));
    }
    ones = ones && multiplier[k] == 1.0f;
  }
  if (ones) {
    multiplier_.reset();
    return Status::ok();
  }
  std::unique_ptr<float[]> copy(new (std::nothrow) float[in]);
  if (!copy) return Status::error(StatusCode::kOutOfMemory, "cannot allocate an int8 input multiplier");
  for (size_t k = 0; k < in; ++k) copy[k] = multiplier[k];
  multiplier_ = std::move(copy);
  return Status::ok();
}

namespace {

// Column blocks per task: 4 blocks (64 columns) is one kernel tile.
constexpr size_t kBlocksPerTask = 4;
// Rows per quantization tile.
constexpr size_t kRowsPerTask = 8;
// A fixed range is Marian's shifted product (GemmArgs::sum_shift): its
// activation codes go in as unsigned bytes, code + 127.
constexpr int32_t kMarianShift = 127;

}  // namespace

bool Int8Linear::set_sparse_input() {
  sparse_kernel_ = packed_.empty() || saturating_lanes_ != 0 ? nullptr
                                                             : q8::sparse_gemm_kernel(kernel_.kernel);
  return sparse_kernel_ != nullptr;
}

Status Int8Linear::set_marian_sums(int32_t lanes) {
  if (lanes != 0 && lanes != q8::kSsse3Lanes && lanes != q8::kAvx2Lanes &&
      lanes != q8::kAvx512bwLanes) {
    return Status::error(StatusCode::kInvalidArgument,
                         "Marian's int8 sums have 8, 16 or 32 lanes (or 0: exact), not %d",
                         static_cast<int>(lanes));
  }
  if (lanes != 0 && !tensor_range_ && fixed_inverse_ == 0.0f) {
    return Status::error(StatusCode::kInvalidArgument,
                         "Marian's int8 sums apply to Marian's int8 arithmetic only");
  }
  saturating_lanes_ = lanes;
  marian_kernel_ = lanes != 0 ? q8::marian_gemm_kernel() : nullptr;
  if (lanes != 0) sparse_kernel_ = nullptr;
  return Status::ok();
}

Status Int8Linear::run(const float* x, size_t rows, float* y, const Parallel& parallel,
                       const LinearScratch& scratch) const {
  return run_columns(x, rows, y, parallel, scratch, packed_.view());
}

Status Int8Linear::run_columns(const float* x, size_t rows, float* y, const Parallel& parallel,
                               const LinearScratch& scratch,
                               const q8::PackedWeights& packed, size_t y_stride) const {
  if (rows == 0) return Status::ok();
  const size_t depth = packed.depth;
  if (packed_.empty() || scratch.quantized == nullptr || rows > scratch.max_rows ||
      depth > scratch.max_depth) {
    return Status::error(StatusCode::kFailedPrecondition,
                         "int8 Linear run without room for %zu rows of %zu (scratch %zu x %zu)",
                         rows, depth, scratch.max_rows, scratch.max_depth);
  }
  if (y_stride != 0 && y_stride < packed.columns) {
    return Status::error(StatusCode::kInvalidArgument,
                         "int8 Linear output rows %zu floats apart for %zu columns", y_stride,
                         packed.columns);
  }
  const size_t stride = q8::padded_depth(depth);
  // Rows are quantized independently (per row, or with the fixed range),
  // so splitting them over threads keeps the bits; worth it only for many
  // long rows (the encoder). ~4 entries per ns (a max|x| pass and a
  // rounding pass, vectorized). One range for the whole tensor needs every
  // row first: one thread.
  const float fixed = fixed_inverse_;
  auto quantize_part = [&](size_t first, size_t end) {
    if (fixed > 0.0f) {
      kernel_.quantize_fixed(x + first * depth, end - first, depth, depth, code_limit_,
                             multiplier_.get(), fixed, scratch.quantized + first * stride,
                             scratch.row_scale + first);
    } else {
      kernel_.quantize(x + first * depth, end - first, depth, depth, code_limit_,
                       multiplier_.get(), scratch.quantized + first * stride,
                       scratch.row_scale + first);
    }
  };
  if (tensor_range_ && fixed == 0.0f) {
    kernel_.quantize_tensor(x, rows, depth, depth, code_limit_, multiplier_.get(),
                            scratch.quantized, scratch.row_scale);
  } else if (parallel.worth(rows * depth / 4)) {
    auto task = [&](size_t first_tile, size_t end_tile, size_t) {
      const size_t first = first_tile * kRowsPerTask;
      const size_t end = end_tile * kRowsPerTask < rows ? end_tile * kRowsPerTask : rows;
      quantize_part(first, end);
    };
    parallel_ranges(parallel, (rows + kRowsPerTask - 1) / kRowsPerTask, kChunksPerThread,
                    rows * depth / 4, task);
  } else {
    quantize_part(0, rows);
  }
  q8::GemmArgs args;
  args.xq = scratch.quantized;
  args.xq_stride = stride;
  args.x_scale = scratch.row_scale;
  args.rows = rows;
  args.code_limit = code_limit_;
  args.weights = &packed;
  args.y = y;
  args.y_stride = y_stride != 0 ? y_stride : packed.columns;
  args.relu = relu_;
  args.sum_shift = fixed_inverse_ > 0.0f ? kMarianShift : 0;
  args.saturating_lanes = saturating_lanes_;
  q8::GemmKernel kernel = marian_kernel_ != nullptr ? marian_kernel_ : kernel_.kernel;
  size_t nanoseconds = q8::gemm_nanoseconds(kernel_, rows, depth, packed.columns);
  // Mostly zero codes (a ReLU's output): a group the zero-skipping kernel
  // adds costs it about what 2-4 cost the dense one (edgemt_kernels_benchmark,
  // BM_SparseInt8Gemm), so it runs below a quarter of the groups; a first
  // row more than half nonzero skips the count.
  const size_t groups = stride / q8::kGroupDepth;
  const size_t limit = rows * groups / kSparseGroupsPerNonzero;
  if (sparse_kernel_ != nullptr &&
      q8::count_nonzero_groups(scratch.quantized, 1, stride, groups, groups / 2) <= groups / 2) {
    const size_t nonzero = q8::count_nonzero_groups(scratch.quantized, rows, stride, groups, limit);
    if (nonzero <= limit) {
      kernel = sparse_kernel_;
      // The dense rate's quarter per multiply-add, over the groups added.
      nanoseconds = q8::gemm_nanoseconds(kernel_, nonzero * 4, q8::kGroupDepth, packed.columns);
    }
  }
  auto blocks = [&](size_t first, size_t count) { kernel(args, first, count); };
  run_column_blocks(parallel, packed.block_count, kBlocksPerTask, nanoseconds, blocks);
  return Status::ok();
}

}  // namespace edgemt
