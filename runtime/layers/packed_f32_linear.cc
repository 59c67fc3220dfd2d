#include "layers/packed_f32_linear.h"

#include <utility>

#include "core/prefaulted_memory.h"

namespace edgemt {

namespace f32 = kernels::f32;

PackedF32Linear::~PackedF32Linear() { free_prefaulted(storage_); }

PackedF32Linear::PackedF32Linear(PackedF32Linear&& other) noexcept
    : storage_(std::exchange(other.storage_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      packed_(std::exchange(other.packed_, {})),
      kernel_(other.kernel_),
      relu_(other.relu_) {}

PackedF32Linear& PackedF32Linear::operator=(PackedF32Linear&& other) noexcept {
  if (this != &other) {
    free_prefaulted(storage_);
    storage_ = std::exchange(other.storage_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    packed_ = std::exchange(other.packed_, {});
    kernel_ = other.kernel_;
    relu_ = other.relu_;
  }
  return *this;
}

Status PackedF32Linear::create(const float* weight, const float* bias, size_t in_features,
                               size_t out_features, bool relu) {
  const f32::GemmKernel kernel = f32::fast_gemm_kernel();
  if (kernel == nullptr) {
    return Status::error(StatusCode::kUnsupported, "no own f32 GEMM kernel for this CPU");
  }
  const size_t bytes = f32::packed_bytes(out_features, in_features);
  void* storage = allocate_prefaulted(64, bytes);  // written in full by pack_weights
  if (storage == nullptr) {
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate %zu bytes for f32 weights", bytes);
  }
  free_prefaulted(storage_);
  storage_ = storage;
  bytes_ = bytes;
  f32::pack_weights(weight, bias, out_features, in_features, storage, &packed_);
  kernel_ = kernel;
  relu_ = relu;
  return Status::ok();
}

void PackedF32Linear::run(const float* x, size_t rows, float* y, const Parallel& parallel) const {
  if (rows == 0) return;
  f32::GemmArgs args;
  args.x = x;
  args.x_stride = packed_.depth;
  args.rows = rows;
  args.weights = &packed_;
  args.y = y;
  args.y_stride = packed_.columns;
  args.relu = relu_;
  // ~16 multiply-adds per ns on one core (AVX-512 FMA; memory-bound at one row).
  const size_t nanoseconds = rows * packed_.depth * packed_.columns / 16;
  const f32::GemmKernel kernel = kernel_;
  const size_t blocks = packed_.block_count;
  constexpr size_t kBlocksPerTask = 4;
  if (blocks <= kBlocksPerTask || !parallel.worth(nanoseconds)) {
    kernel(args, 0, blocks);
    return;
  }
  auto task = [&](size_t first_tile, size_t end_tile, size_t) {
    const size_t first = first_tile * kBlocksPerTask;
    const size_t end = end_tile * kBlocksPerTask < blocks ? end_tile * kBlocksPerTask : blocks;
    kernel(args, first, end - first);
  };
  parallel_ranges(parallel, (blocks + kBlocksPerTask - 1) / kBlocksPerTask, kChunksPerThread,
                  nanoseconds, task);
}

}  // namespace edgemt
