// PackedMatrix: a weight matrix packed for one of the runtime's own GEMM
// kernels (int8: kernels/int8_gemm.h, f32: kernels/f32_gemm.h) — the block
// of memory holding the pack and the kernel's view of it (pointers into
// that block). One owner for both, so the layers that hold a pack
// (Int8Linear, PackedF32Linear) move and destroy by default.
//
// Load phase only: the block comes from allocate_prefaulted (packs are
// written in full right away). Move-only; a moved-from PackedMatrix is
// empty: no block and an all-zero view.
#pragma once

#include <cstddef>
#include <utility>

#include "core/prefaulted_memory.h"

namespace edgemt {

template <typename View>
class PackedMatrix {
 public:
  PackedMatrix() = default;
  ~PackedMatrix() { free_prefaulted(block_); }
  PackedMatrix(const PackedMatrix&) = delete;
  PackedMatrix& operator=(const PackedMatrix&) = delete;
  PackedMatrix(PackedMatrix&& other) noexcept
      : block_(std::exchange(other.block_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)),
        view_(std::exchange(other.view_, View{})) {}
  PackedMatrix& operator=(PackedMatrix&& other) noexcept {
    if (this != &other) {
      free_prefaulted(block_);
      block_ = std::exchange(other.block_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
      view_ = std::exchange(other.view_, View{});
    }
    return *this;
  }

  // Replaces this matrix by an empty block of `bytes` (64-byte aligned) for
  // a new pack to be written into data() and described in *mutable_view(); false
  // when out of memory (this matrix unchanged then).
  [[nodiscard]] bool allocate(size_t bytes) {
    void* block = allocate_prefaulted(64, bytes);
    if (block == nullptr) return false;
    free_prefaulted(block_);
    block_ = block;
    bytes_ = bytes;
    view_ = View{};
    return true;
  }

  void* data() const { return block_; }
  size_t bytes() const { return bytes_; }
  bool empty() const { return block_ == nullptr; }
  const View& view() const { return view_; }
  View* mutable_view() { return &view_; }

 private:
  void* block_ = nullptr;
  size_t bytes_ = 0;
  View view_{};
};

}  // namespace edgemt
