#include "layers/packed_f32_linear.h"

#include <utility>

#include "kernels/f32_gemm_sparse.h"

namespace edgemt {

namespace f32 = kernels::f32;

Status PackedF32Linear::create(const float* weight, const float* bias, size_t in_features,
                               size_t out_features, bool relu) {
  UnpackedF32Linear rows;  // no page release: the caller's memory
  EDGEMT_RETURN_IF_ERROR(rows.create(weight, bias, in_features, out_features));
  return create(rows, relu);
}

Status PackedF32Linear::create(const UnpackedF32Linear& rows, bool relu) {
  if (rows.empty()) return Status::error(StatusCode::kInvalidArgument, "no rows to pack");
  const size_t columns = rows.out_features(), depth = rows.in_features();
  PackedMatrix<f32::PackedWeights> packed;
  const size_t bytes = f32::packed_bytes(columns, depth);
  if (!packed.allocate(bytes)) {  // written in full, part by part
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate %zu bytes for f32 weights", bytes);
  }
  constexpr size_t kPartBlocks = 64;  // 1024 rows
  const size_t blocks = (columns + f32::kBlockColumns - 1) / f32::kBlockColumns;
  bool tiny = false;
  for (size_t first = 0; first < blocks; first += kPartBlocks) {
    const size_t count = blocks - first < kPartBlocks ? blocks - first : kPartBlocks;
    tiny |= f32::pack_block_range(rows.weight(), rows.bias(), columns, depth, first, count,
                                  packed.data());
    const size_t n0 = first * f32::kBlockColumns;
    const size_t n1 = (first + count) * f32::kBlockColumns;
    rows.release_rows(n0, (n1 < columns ? n1 : columns) - n0);
  }
  f32::PackedWeights* view = packed.mutable_view();
  view->blocks = static_cast<const float*>(packed.data());
  view->bias = view->blocks + blocks * depth * f32::kBlockColumns;
  view->columns = columns;
  view->depth = depth;
  view->block_count = blocks;
  view->tiny = tiny ? f32::TinyWeights::kSome : f32::TinyWeights::kNone;
  packed_ = std::move(packed);
  kernel_ = rows.kernel();
  relu_ = relu;
  return Status::ok();
}

bool PackedF32Linear::set_sparse_input() {
  const f32::PackedWeights& packed = packed_.view();
  const f32::GemmKernel sparse = f32::sparse_gemm_kernel();
  // The pack holds every weight and bias (zeros past N).
  const size_t floats = packed.block_count * f32::kBlockColumns * (packed.depth + 1);
  if (sparse == nullptr || packed.blocks == nullptr ||
      f32::has_non_finite_values(packed.blocks, floats)) {
    return false;
  }
  sparse_kernel_ = sparse;
  return true;
}

void PackedF32Linear::run(const float* x, size_t rows, float* y, const Parallel& parallel) const {
  if (rows == 0) return;
  const f32::PackedWeights& packed = packed_.view();
  f32::GemmArgs args;
  args.x = x;
  args.x_stride = packed.depth;
  args.rows = rows;
  args.weights = &packed;
  args.y = y;
  args.y_stride = packed.columns;
  args.relu = relu_;
  // ~16 multiply-adds per ns on one core (AVX-512 FMA; memory-bound at one
  // row); 4 blocks (64 columns) is the kernels' widest tile.
  f32::GemmKernel kernel = kernel_;
  size_t nanoseconds = rows * packed.depth * packed.columns / 16;
  // A term costs the zero-skipping kernel about what 3 cost the dense one
  // (its weights come a line at a time, one block row per nonzero input; 4
  // before x86 listed a row's nonzeros first): below a quarter nonzero it
  // is well ahead (edgemt_kernels_benchmark, BM_SparseF32Gemm; a third
  // would do now, not changed without a model that needs it). The count
  // stops past its limit, and a first row more than half nonzero stops it
  // sooner: an input that is not sparse costs a look at half a row
  // (counting a quarter of all rows cost a batch's dense product 3-4%).
  // Rows are counted evenly spaced, at most kCountedRows of them: either
  // kernel makes the same y, so a sample only has to pick the faster one
  // (counting all 480 rows of an encoder batch read 2.9 MB that the kernel
  // reads again, 1.3% of an fp32 student's batch-32 run).
  const size_t step = (rows + kCountedRows - 1) / kCountedRows;
  const size_t counted = (rows + step - 1) / step;
  const size_t limit = counted * packed.depth / kSparseDepthPerNonzero;
  const size_t half_row = packed.depth / 2;
  if (sparse_kernel_ != nullptr &&
      f32::count_nonzeros(x, 1, packed.depth, packed.depth, half_row) <= half_row) {
    const size_t nonzeros = f32::count_nonzeros(x, counted, step * packed.depth, packed.depth, limit);
    if (nonzeros <= limit) {
      kernel = sparse_kernel_;
      // A quarter of the dense rate, for the rows counted times step.
      nanoseconds = nonzeros * step * packed.columns / 4;
    }
  }
  auto blocks = [&](size_t first, size_t count) { kernel(args, first, count); };
  run_column_blocks(parallel, packed.block_count, 4, nanoseconds, blocks);
}

}  // namespace edgemt
