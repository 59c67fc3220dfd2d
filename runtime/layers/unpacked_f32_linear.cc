#include "layers/unpacked_f32_linear.h"

namespace edgemt {

namespace f32 = kernels::f32;

size_t UnpackedF32Linear::scratch_floats(size_t in_features) {
  // pack_weights' layout for 64 columns: [4, K, 16] blocks, then 64 biases.
  return f32::packed_bytes(kGroupBlocks * f32::kBlockColumns, in_features) / sizeof(float);
}

Status UnpackedF32Linear::create(const float* weight, const float* bias, size_t in_features,
                                 size_t out_features) {
  const f32::GemmKernel fast = f32::fast_gemm_kernel();
  if (fast == nullptr) {
    return Status::error(StatusCode::kUnsupported, "no own f32 GEMM kernel for this CPU");
  }
  weight_ = weight;
  bias_ = bias;
  in_ = in_features;
  out_ = out_features;
  kernel_ = fast;
  return Status::ok();
}

void UnpackedF32Linear::pack_blocks(size_t first_block, size_t block_count, float* scratch,
                                    f32::PackedWeights* out) const {
  const size_t n0 = first_block * f32::kBlockColumns;
  size_t columns = block_count * f32::kBlockColumns;
  if (columns > out_ - n0) columns = out_ - n0;
  // For one product (run, the arg-max shortcut's candidates): no tiny check.
  f32::pack_weights(weight_ + n0 * in_, bias_ != nullptr ? bias_ + n0 : nullptr, columns, in_,
                    scratch, out, nullptr, false);
}

void UnpackedF32Linear::run(const float* x, size_t rows, float* y, float* scratch,
                            const Parallel& parallel) const {
  if (rows == 0) return;
  const size_t blocks = (out_ + f32::kBlockColumns - 1) / f32::kBlockColumns;
  const size_t groups = (blocks + kGroupBlocks - 1) / kGroupBlocks;
  const size_t slot_floats = scratch_floats(in_);
  auto group = [&](size_t g, size_t slot) {
    const size_t first = g * kGroupBlocks;
    f32::PackedWeights packed;
    float* own = scratch + slot * slot_floats;
    pack_blocks(first, blocks - first < kGroupBlocks ? blocks - first : kGroupBlocks, own, &packed);
    f32::GemmArgs args;
    args.x = x;
    args.x_stride = in_;
    args.rows = rows;
    args.weights = &packed;
    args.y = y + first * f32::kBlockColumns;  // column 0 of the group
    args.y_stride = out_;
    kernel_(args, 0, packed.block_count);
  };
  // Per group: the transposition (~1 ns per weight) and rows x 64 x K
  // multiply-adds (~16 per ns).
  const size_t per_group = kGroupBlocks * f32::kBlockColumns * in_ * (16 + rows) / 16;
  parallel_for(parallel, groups, per_group, group);
}

}  // namespace edgemt
