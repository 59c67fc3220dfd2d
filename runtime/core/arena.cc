#include "core/arena.h"

namespace edgemt {

void* Arena::allocate_bytes(size_t bytes) {
  const size_t start = (used_ + kAlignment - 1) / kAlignment * kAlignment;
  // Every buffer gets kAlignment spare bytes at its end: XNNPACK reads up to
  // XNN_EXTRA_BYTES (16) past an input, and vector kernels may read a tail.
  const size_t end = start + bytes + kAlignment;
  used_ = end;
  if (measuring()) return nullptr;
  if (end > capacity_) {
    overflowed_ = true;
    return nullptr;
  }
  return base_ + start;
}

}  // namespace edgemt
