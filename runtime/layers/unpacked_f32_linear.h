// UnpackedF32Linear: y = x · Wᵀ + b for an f32 matrix read in place (row
// major, e.g. the model file's mapping), with the bits of PackedF32Linear
// but without its copy of W: every group of up to 4 column blocks (64
// rows of W) is packed into the caller's scratch right before the own f32
// GEMM kernel runs on it. Packing rows [16·b, 16·b + 64) alone gives the
// same floats as blocks b..b+3 of the whole pack (kernels/f32_gemm.h), and
// each y is one fused multiply-add chain in k order whatever the tiling, so
// y is bit-identical to the packed product.
//
// What it is for: the output projection of a translator that never needs
// all its logits in the common case (greedy without scores,
// layers/argmax_shortcut.h). There the pack would be the largest buffer of
// the process (119 MiB for OPUS-MT-base's 58k x 512) while a step reads
// only a few rows; this computes the rare full row (and beam search on such
// a translator) from the file instead, slower than from a pack (the
// transposition costs about as much as the product at a few rows).
//
// Load phase: create() keeps pointers, allocates nothing. Run phase: run()
// uses the caller's scratch, [slots, scratch_floats(K)] floats, one slot per
// thread of `parallel`, 64-byte aligned (the kernels load the packed blocks
// aligned; every slot then is too); no allocation. Not thread-safe per
// instance.
#pragma once

#include <cstddef>

#include "core/parallel.h"
#include "edgemt/status.h"
#include "kernels/f32_gemm.h"

namespace edgemt {

class UnpackedF32Linear {
 public:
  // Column blocks packed per kernel call: the kernels' widest tile.
  static constexpr size_t kGroupBlocks = 4;

  // Floats of one slot of run()'s scratch for depth `in_features`.
  static size_t scratch_floats(size_t in_features);

  // weight: [out, in] f32, bias: [out] or nullptr; both must outlive this.
  // kUnsupported when this CPU has no own f32 GEMM kernel.
  [[nodiscard]] Status create(const float* weight, const float* bias, size_t in_features,
                              size_t out_features);

  // Load phase: readers that go over every row once (ArgmaxShortcut::create)
  // drop the pages of the rows they are done with through `release` (the
  // model file's, Model::release_tensor_pages), so that the matrix is never
  // resident whole beside what they build from it. Without one (the
  // default) release_rows does nothing.
  using ReleaseRows = void (*)(const void* context, const float* rows, size_t floats);
  void set_release(ReleaseRows release, const void* context) {
    release_ = release;
    release_context_ = context;
  }
  void release_rows(size_t first, size_t count) const {
    if (release_ != nullptr) release_(release_context_, weight_ + first * in_, count * in_);
  }

  bool empty() const { return weight_ == nullptr; }
  size_t in_features() const { return in_; }
  size_t out_features() const { return out_; }
  const float* weight() const { return weight_; }  // [out, in]
  const float* bias() const { return bias_; }      // [out] or nullptr
  kernels::f32::GemmKernel kernel() const { return kernel_; }

  // Packs the `block_count` (<= kGroupBlocks) column blocks from block
  // `first_block` into `scratch` (one slot) and describes them in *out: a
  // pack of their columns alone (columns 0.. are W's rows 16·first_block..),
  // made for one product: its weights not checked for tiny ones (kUnknown).
  void pack_blocks(size_t first_block, size_t block_count, float* scratch,
                   kernels::f32::PackedWeights* out) const;

  // x: [rows, in] (row stride in), y: [rows, out]; scratch: [slots,
  // scratch_floats(in)] with slots >= parallel.workers.
  void run(const float* x, size_t rows, float* y, float* scratch, const Parallel& parallel) const;

 private:
  const float* weight_ = nullptr;
  const float* bias_ = nullptr;
  size_t in_ = 0;
  size_t out_ = 0;
  kernels::f32::GemmKernel kernel_ = nullptr;
  ReleaseRows release_ = nullptr;
  const void* release_context_ = nullptr;
};

}  // namespace edgemt
