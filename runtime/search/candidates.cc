#include "search/candidates.h"

#include <cmath>

namespace edgemt {

void TopK::push(float score, size_t index) {
  // Nearly every candidate loses to the current k-th best: test that first.
  if (size_ == capacity_ && (capacity_ == 0 || !(score > scores_[size_ - 1]))) return;
  if (std::isinf(score) || std::isnan(score)) return;
  // Insert after every kept entry with score >= this one (stable for ties).
  size_t at = size_ < capacity_ ? size_ : capacity_ - 1;
  while (at > 0 && scores_[at - 1] < score) {
    scores_[at] = scores_[at - 1];
    indices_[at] = indices_[at - 1];
    --at;
  }
  scores_[at] = score;
  indices_[at] = index;
  if (size_ < capacity_) ++size_;
}

}  // namespace edgemt
