// Arena: the one block of run-phase memory.
//
// Planning follows TFLite Micro's two passes: prepare() first runs the layout
// code against a *measuring* arena (no base pointer) to learn the size, then
// against the real buffer. Every buffer the run phase touches is carved from
// it; nothing is freed individually.
//
//   base ─┬────────────┬──────────┬─────────────── ... ─┐
//         │ buffer 0   │ buffer 1 │                     │  each 64-byte aligned
//         └────────────┴──────────┴─────────────── ... ─┘
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {

class Arena {
 public:
  static constexpr size_t kAlignment = 64;

  // Measuring arena: allocations return nullptr, used() grows.
  Arena() = default;
  // Real arena over caller memory (must be kAlignment aligned).
  Arena(void* base, size_t capacity) : base_(static_cast<uint8_t*>(base)), capacity_(capacity) {}

  bool measuring() const { return base_ == nullptr; }
  size_t used() const { return used_; }
  // True when a real arena ran out of room (the layout differs from the
  // measured one: a bug, reported by prepare()).
  bool overflowed() const { return overflowed_; }

  // `count` objects of T, aligned; nullptr when measuring or out of room.
  template <typename T>
  T* allocate(size_t count) {
    return static_cast<T*>(allocate_bytes(count * sizeof(T)));
  }
  void* allocate_bytes(size_t bytes);

 private:
  uint8_t* base_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
  bool overflowed_ = false;
};

}  // namespace edgemt
