// Arena: the one block of run-phase memory, laid out by buffer lifetimes.
//
// The layout code (plan_workspace, plan_search, the translator's own
// buffers) runs twice against one Arena, as in TFLite Micro:
//   1. planning: each allocate(count, lifetime) records a request and returns
//      nullptr; finish_plan() then gives every request an offset;
//   2. binding: after bind(base), the same calls in the same order return
//      base + offset (a call that differs from its recorded request marks
//      the arena overflowed instead: a bug, reported by prepare()).
//
// A lifetime is the span [first, last] of run steps (models/transformer/workspace.h
// numbers them) in which a buffer holds data that is read later. Buffers
// whose spans overlap never share a byte; the others may, so the encoder's
// temporaries and the decoder's caches take turns in the same memory.
// Offsets come from TFLite Micro's greedy planner: largest request first,
// each at the lowest offset where it overlaps no already placed request that
// is live at the same time.
//
//   base ─┬──────────────┬──────────────────────┬─── ... ─┐
//         │ encoder x    │ enc temporaries  ══> │         │ each 64-byte aligned,
//         │              │ decoder caches   ══> │         │ kAlignment spare bytes after
//         └──────────────┴──────────────────────┴─── ... ─┘
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {

// Run steps [first, last] (inclusive) in which a buffer is live.
struct Lifetime {
  uint16_t first = 0;
  uint16_t last = 0;
};

class Arena {
 public:
  static constexpr size_t kAlignment = 64;
  // Requests one plan may hold: the Transformer asks for 3 per decoder layer
  // (models/transformer/config.h allows 64) and about 50 more.
  static constexpr size_t kMaxRequests = 512;

  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Starts a new planning pass (forgets every request).
  void reset();

  // `count` objects of T live during `lifetime`: nullptr while planning (and
  // when the arena overflowed), base + offset once bound.
  template <typename T>
  T* allocate(size_t count, Lifetime lifetime) {
    return static_cast<T*>(allocate_bytes(count * sizeof(T), lifetime));
  }
  void* allocate_bytes(size_t bytes, Lifetime lifetime);

  // Places the recorded requests; false when the plan cannot be used (too
  // many requests, a lifetime with first > last, or a size that overflows).
  [[nodiscard]] bool finish_plan();
  // Bytes the placed plan spans (a multiple of kAlignment).
  size_t size() const { return size_; }
  // Bytes the same requests take one after another, each with its own
  // memory for the whole run (what the arena needed before lifetimes).
  size_t unshared_size() const { return unshared_size_; }
  size_t request_count() const { return count_; }

  // Starts the binding pass over caller memory of size() bytes, aligned to
  // kAlignment. Only after a successful finish_plan().
  void bind(void* base);

  // True when planning or binding went wrong (see above); sticky until reset().
  bool overflowed() const { return overflowed_; }

 private:
  struct Request {
    size_t bytes = 0;   // extent: requested bytes + spare, rounded to kAlignment
    size_t offset = 0;  // from finish_plan()
    Lifetime lifetime;
  };

  Request requests_[kMaxRequests];
  size_t count_ = 0;         // recorded requests
  size_t next_ = 0;          // binding: index of the next call
  size_t size_ = 0;
  size_t unshared_size_ = 0;
  uint8_t* base_ = nullptr;  // null while planning
  bool planned_ = false;
  bool overflowed_ = false;
};

}  // namespace edgemt
