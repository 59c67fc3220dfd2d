#include "core/arena.h"

#include <algorithm>
#include <cstdint>

namespace edgemt {
namespace {

bool overlap(Lifetime a, Lifetime b) { return a.first <= b.last && b.first <= a.last; }

}  // namespace

void Arena::reset() {
  count_ = 0;
  next_ = 0;
  size_ = 0;
  unshared_size_ = 0;
  base_ = nullptr;
  planned_ = false;
  overflowed_ = false;
}

void* Arena::allocate_bytes(size_t bytes, Lifetime lifetime) {
  // Every buffer gets kAlignment spare bytes at its end: XNNPACK reads up to
  // XNN_EXTRA_BYTES (16) past an input, and vector kernels may read a tail.
  // They belong to the buffer's extent, so no buffer live at the same time
  // is placed over them.
  if (overflowed_ || bytes > SIZE_MAX / 2) {
    overflowed_ = true;
    return nullptr;
  }
  const size_t extent = (bytes + 2 * kAlignment - 1) / kAlignment * kAlignment;
  if (base_ == nullptr) {  // planning
    if (planned_ || count_ == kMaxRequests || lifetime.first > lifetime.last) {
      overflowed_ = true;
      return nullptr;
    }
    requests_[count_++] = Request{extent, 0, lifetime};
    return nullptr;
  }
  // Binding: the call must repeat its recorded request.
  if (next_ == count_) {
    overflowed_ = true;
    return nullptr;
  }
  const Request& request = requests_[next_++];
  if (request.bytes != extent || request.lifetime.first != lifetime.first ||
      request.lifetime.last != lifetime.last) {
    overflowed_ = true;
    return nullptr;
  }
  return base_ + request.offset;
}

bool Arena::finish_plan() {
  if (overflowed_ || planned_) return false;
  // Largest first (ties: request order), as TFLite Micro's greedy planner.
  uint16_t order[kMaxRequests];
  for (size_t i = 0; i < count_; ++i) order[i] = static_cast<uint16_t>(i);
  std::sort(order, order + count_, [this](uint16_t a, uint16_t b) {
    if (requests_[a].bytes != requests_[b].bytes) return requests_[a].bytes > requests_[b].bytes;
    return a < b;
  });
  uint16_t live[kMaxRequests];  // placed requests live with the current one, by offset
  size_ = 0;
  unshared_size_ = 0;
  for (size_t placed = 0; placed < count_; ++placed) {
    Request& request = requests_[order[placed]];
    size_t conflicts = 0;
    for (size_t j = 0; j < placed; ++j) {
      if (overlap(requests_[order[j]].lifetime, request.lifetime)) live[conflicts++] = order[j];
    }
    std::sort(live, live + conflicts,
              [this](uint16_t a, uint16_t b) { return requests_[a].offset < requests_[b].offset; });
    // The lowest gap between live requests that holds this one.
    size_t offset = 0;
    for (size_t j = 0; j < conflicts; ++j) {
      const Request& other = requests_[live[j]];
      if (other.offset >= offset && other.offset - offset >= request.bytes) break;
      offset = std::max(offset, other.offset + other.bytes);
    }
    if (offset > SIZE_MAX - request.bytes || unshared_size_ > SIZE_MAX - request.bytes) {
      overflowed_ = true;
      return false;
    }
    request.offset = offset;
    size_ = std::max(size_, offset + request.bytes);
    unshared_size_ += request.bytes;
  }
  planned_ = true;
  return true;
}

void Arena::bind(void* base) {
  if (!planned_ || base == nullptr || reinterpret_cast<uintptr_t>(base) % kAlignment != 0) {
    overflowed_ = true;
    return;
  }
  base_ = static_cast<uint8_t*>(base);
  next_ = 0;
}

}  // namespace edgemt
