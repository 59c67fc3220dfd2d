// Top-k selection over beam candidates (the scan that feeds it is
// kernels/vocab_row.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {

// Keeps the `capacity` best (score, index) pairs fed to it, best first.
// Order: higher score first; equal scores keep the lower index first (feed
// indices in increasing order). -inf scores are never kept. Memory is the
// caller's (arena).
class TopK {
 public:
  TopK(float* scores, size_t* indices, size_t capacity)
      : scores_(scores), indices_(indices), capacity_(capacity) {}

  void push(float score, size_t index);
  size_t size() const { return size_; }
  float score(size_t rank) const { return scores_[rank]; }
  size_t index(size_t rank) const { return indices_[rank]; }

 private:
  float* scores_;
  size_t* indices_;
  size_t capacity_;
  size_t size_ = 0;
};

}  // namespace edgemt
