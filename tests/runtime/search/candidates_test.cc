#include "search/candidates.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

TEST_CASE("TopK keeps the best entries with ties to the lower index") {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> value(0, 9);  // many ties
  for (size_t capacity : {size_t{1}, size_t{2}, size_t{5}, size_t{8}}) {
    std::vector<float> scores(64);
    for (float& s : scores) s = static_cast<float>(value(rng));
    scores[5] = -INFINITY;
    std::vector<float> kept_scores(capacity);
    std::vector<size_t> kept_index(capacity);
    edgemt::TopK top(kept_scores.data(), kept_index.data(), capacity);
    for (size_t i = 0; i < scores.size(); ++i) top.push(scores[i], i);

    // Naive reference: sort (score desc, index asc), drop -inf.
    std::vector<std::pair<float, size_t>> all;
    for (size_t i = 0; i < scores.size(); ++i) {
      if (!std::isinf(scores[i])) all.push_back({scores[i], i});
    }
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    REQUIRE(top.size() == capacity);
    for (size_t r = 0; r < capacity; ++r) {
      CHECK(top.score(r) == all[r].first);
      CHECK(top.index(r) == all[r].second);
    }
  }
}

TEST_CASE("TopK with fewer entries than capacity and -inf entries") {
  float scores[4];
  size_t index[4];
  edgemt::TopK top(scores, index, 4);
  top.push(-INFINITY, 0);
  top.push(1.0f, 1);
  top.push(2.0f, 2);
  REQUIRE(top.size() == 2);
  CHECK(top.index(0) == 2);
  CHECK(top.index(1) == 1);
}

