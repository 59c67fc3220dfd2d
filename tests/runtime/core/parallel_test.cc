// parallel_for on an edgemt ThreadPool and on none: every item runs exactly
// once, the slot is below the pool's thread count, a slot is never used by
// two threads at once (per-slot scratch is safe), and counts of 0 and below
// the thread count work. Work estimated below kMinParallelNanoseconds runs
// on the calling thread in slot 0; a long job is cut into more chunks.
#include "core/parallel.h"

#include <doctest/doctest.h>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "support/thread_pool.h"

namespace edgemt {
namespace {

struct Visit {
  std::atomic<int> times{0};
  std::atomic<size_t> slot{0};
};

using testing::Pool;

void check_run(ThreadPool* pool, size_t count) {
  const size_t slots = pool != nullptr ? pool->threads() : 1;
  CAPTURE(slots);
  CAPTURE(count);
  std::vector<Visit> visits(count);
  std::vector<std::atomic<int>> busy(slots);  // items running in each slot now
  std::atomic<int> calls{0};
  std::atomic<bool> slot_in_range{true}, slot_shared{false};
  auto f = [&](size_t item, size_t slot) {
    calls.fetch_add(1);
    if (item >= count) return;  // counted in `calls`, caught below
    if (slot >= slots) {
      slot_in_range.store(false);
      return;
    }
    if (busy[slot].fetch_add(1) != 0) slot_shared.store(true);
    visits[item].times.fetch_add(1);
    visits[item].slot.store(slot);
    busy[slot].fetch_sub(1);
  };
  parallel_for(Parallel(pool, 0), count, 1, f);  // threshold 0: always split
  CHECK(calls.load() == static_cast<int>(count));
  bool once = true;
  for (size_t i = 0; i < count; ++i) {
    once &= visits[i].times.load() == 1;
    if (pool == nullptr) once &= visits[i].slot.load() == 0;
  }
  CHECK(once);
  CHECK(slot_in_range.load());
  CHECK_FALSE(slot_shared.load());
}

constexpr size_t kCounts[] = {0, 1, 2, 3, 5, 7, 64, 1000};

TEST_CASE("core/parallel: without a pool every item runs once in slot 0") {
  for (size_t count : kCounts) check_run(nullptr, count);
}

TEST_CASE("core/parallel: on 1- to 8-thread pools every item runs once with slot < threads") {
  for (size_t threads : {size_t{1}, size_t{2}, size_t{3}, size_t{8}}) {
    CAPTURE(threads);
    Pool pool = testing::make_pool(threads);
    REQUIRE(pool != nullptr);
    for (size_t count : kCounts) check_run(pool.get(), count);
  }
}

TEST_CASE("core/parallel: count 0 never calls the function") {
  Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  int calls = 0;
  auto f = [&](size_t, size_t) { ++calls; };
  parallel_for(Parallel(pool.get(), 0), 0, 1, f);
  parallel_for(Parallel(nullptr, 0), 0, 1, f);
  CHECK(calls == 0);
}

TEST_CASE("core/parallel: per-slot scratch sums equal the serial sum") {
  // The pattern the kernels use: slot w accumulates into scratch[w] without
  // atomics. A slot shared by two threads would lose updates (under TSan: a
  // race report).
  constexpr size_t kCount = 10007;
  for (size_t threads : {size_t{2}, size_t{3}, size_t{5}}) {
    CAPTURE(threads);
    Pool pool = testing::make_pool(threads);
    REQUIRE(pool != nullptr);
    const Parallel parallel(pool.get(), 0);
    REQUIRE(parallel.workers == threads);
    for (int repeat = 0; repeat < 20; ++repeat) {
      std::vector<uint64_t> scratch(parallel.workers, 0);
      auto f = [&](size_t item, size_t slot) { scratch[slot] += item + 1; };
      parallel_for(parallel, kCount, 1, f);
      uint64_t total = 0;
      for (uint64_t s : scratch) total += s;
      CHECK(total == uint64_t{kCount} * (kCount + 1) / 2);
    }
  }
}

TEST_CASE("core/parallel: work below the threshold runs on the calling thread in slot 0") {
  Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  const pthread_t caller = pthread_self();
  for (size_t count : {size_t{1}, size_t{4}, size_t{100}}) {
    CAPTURE(count);
    const size_t per_item = (kMinParallelNanoseconds - 1) / count;  // total just below
    size_t calls = 0;
    bool on_caller = true;
    bool slot_zero = true;
    auto f = [&](size_t, size_t slot) {
      ++calls;  // no atomics needed: everything runs here
      on_caller &= pthread_equal(pthread_self(), caller) != 0;
      slot_zero &= slot == 0;
    };
    parallel_for(Parallel(pool.get(), kMinParallelNanoseconds), count, per_item, f);
    CHECK(calls == count);
    CHECK(on_caller);
    CHECK(slot_zero);
  }
}

// The ranges parallel_ranges hands out for a job of `count` items estimated
// at `nanoseconds`: sorted, they must tile [0, count) exactly.
std::vector<std::pair<size_t, size_t>> ranges_of(ThreadPool* pool, size_t count, size_t nanoseconds) {
  std::mutex mutex;
  std::vector<std::pair<size_t, size_t>> ranges;
  auto f = [&](size_t begin, size_t end, size_t) {
    std::lock_guard<std::mutex> lock(mutex);
    ranges.emplace_back(begin, end);
  };
  parallel_ranges(Parallel(pool, 0), count, kChunksPerThread, nanoseconds, f);
  std::sort(ranges.begin(), ranges.end());
  return ranges;
}

bool tiles(const std::vector<std::pair<size_t, size_t>>& ranges, size_t count) {
  size_t next = 0;
  for (const auto& r : ranges) {
    if (r.first != next || r.second <= r.first) return false;
    next = r.second;
  }
  return next == count;
}

TEST_CASE("core/parallel: a long job is cut into chunks of at most kLongestChunkNanoseconds") {
  Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  const size_t few = 2 * kChunksPerThread;
  // Short: threads × kChunksPerThread chunks.
  auto ranges = ranges_of(pool.get(), 1000, kLongestChunkNanoseconds);
  CHECK(ranges.size() == few);
  CHECK(tiles(ranges, 1000));
  // Long: one chunk per kLongestChunkNanoseconds of the estimate.
  ranges = ranges_of(pool.get(), 1000, 60 * kLongestChunkNanoseconds + 1);
  CHECK(ranges.size() == 60);
  CHECK(tiles(ranges, 1000));
  // Never more chunks than items.
  ranges = ranges_of(pool.get(), 25, 60 * kLongestChunkNanoseconds);
  CHECK(ranges.size() == 25);
  CHECK(tiles(ranges, 25));
}

TEST_CASE("core/parallel: worth() needs a pool of 2+ threads and enough work") {
  Pool one = testing::make_pool(1);
  Pool two = testing::make_pool(2);
  REQUIRE(one != nullptr);
  REQUIRE(two != nullptr);
  CHECK_FALSE(Parallel().worth(kMinParallelNanoseconds * 100));
  CHECK_FALSE(Parallel(one.get()).worth(kMinParallelNanoseconds * 100));
  CHECK_FALSE(Parallel(two.get()).worth(kMinParallelNanoseconds - 1));
  CHECK(Parallel(two.get()).worth(kMinParallelNanoseconds));
  // A bare pool gets one scratch slot per thread and the default threshold.
  CHECK(Parallel(two.get()).workers == 2);
  CHECK(Parallel(nullptr).workers == 1);
  CHECK(Parallel(two.get()).min_nanoseconds == kMinParallelNanoseconds);
  // Threshold 0 splits any work; a custom one is honoured exactly.
  CHECK(Parallel(two.get(), 0).worth(0));
  CHECK_FALSE(Parallel(two.get(), 500).worth(499));
  CHECK(Parallel(two.get(), 500).worth(500));
}

}  // namespace
}  // namespace edgemt
