// parallel_for on a real pthreadpool and on none: every item runs exactly
// once, the slot is below the worker count (and the item count), each slot
// owns one contiguous slice run by one thread (per-slot scratch is safe),
// and counts of 0 and below the worker count work. Work estimated below
// kMinParallelNanoseconds runs on the calling thread in slot 0.
#include "core/parallel.h"

#include <doctest/doctest.h>

#include "support/thread_pool.h"

#include <pthread.h>
#include <pthreadpool.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace edgemt {
namespace {

struct Visit {
  std::atomic<int> times{0};
  std::atomic<size_t> slot{0};
  std::atomic<pthread_t> thread{};
};

using testing::Pool;

void check_run(pthreadpool_t pool, size_t workers, size_t count) {
  CAPTURE(workers);
  CAPTURE(count);
  std::vector<Visit> visits(count);
  std::atomic<int> calls{0};
  auto f = [&](size_t item, size_t slot) {
    calls.fetch_add(1);
    if (item >= count) return;  // counted in `calls`, caught below
    visits[item].times.fetch_add(1);
    visits[item].slot.store(slot);
    visits[item].thread.store(pthread_self());
  };
  parallel_for(Parallel(pool, workers, 0), count, 1, f);  // threshold 0: always split
  CHECK(calls.load() == static_cast<int>(count));

  const size_t effective = workers < count ? workers : count;
  bool once = true;
  bool slot_in_range = true;
  bool contiguous = true;
  bool one_thread_per_slot = true;
  for (size_t i = 0; i < count; ++i) {
    once &= visits[i].times.load() == 1;
    const size_t slot = visits[i].slot.load();
    slot_in_range &= slot < (effective == 0 ? 1 : effective);
    if (pool == nullptr) slot_in_range &= slot == 0;
    if (i > 0) {
      const size_t previous = visits[i - 1].slot.load();
      contiguous &= slot == previous || slot == previous + 1;
      if (slot == previous) {
        one_thread_per_slot &=
            pthread_equal(visits[i].thread.load(), visits[i - 1].thread.load()) != 0;
      }
    }
  }
  CHECK(once);
  CHECK(slot_in_range);
  CHECK(contiguous);
  CHECK(one_thread_per_slot);
  // With a pool and more items than workers every slot gets work.
  if (pool != nullptr && count > 0 && workers > 1) {
    CHECK(visits.front().slot.load() == 0);
    CHECK(visits.back().slot.load() == effective - 1);
  }
}

constexpr size_t kWorkers[] = {1, 2, 3, 4, 8};
constexpr size_t kCounts[] = {0, 1, 2, 3, 5, 7, 64, 1000};

TEST_CASE("core/parallel: without a pool every item runs once in slot 0") {
  for (size_t workers : kWorkers) {
    for (size_t count : kCounts) check_run(nullptr, workers, count);
  }
}

TEST_CASE("core/parallel: on 2- and 3-thread pools every item runs once with slot < workers") {
  for (size_t threads : {size_t{2}, size_t{3}}) {
    CAPTURE(threads);
    Pool pool(pthreadpool_create(threads));
    REQUIRE(pool != nullptr);
    for (size_t workers : kWorkers) {
      for (size_t count : kCounts) check_run(pool.get(), workers, count);
    }
  }
}

TEST_CASE("core/parallel: count 0 never calls the function") {
  Pool pool(pthreadpool_create(2));
  REQUIRE(pool != nullptr);
  int calls = 0;
  auto f = [&](size_t, size_t) { ++calls; };
  parallel_for(Parallel(pool.get(), 2, 0), 0, 1, f);
  parallel_for(Parallel(nullptr, 2, 0), 0, 1, f);
  parallel_for(Parallel(pool.get(), 0, 0), 0, 1, f);
  CHECK(calls == 0);
}

TEST_CASE("core/parallel: per-slot scratch sums equal the serial sum") {
  // The pattern the kernels use: slot w accumulates into scratch[w] without
  // atomics. A slot shared by two threads would lose updates (under TSan: a
  // race report).
  Pool pool(pthreadpool_create(3));
  REQUIRE(pool != nullptr);
  constexpr size_t kCount = 10007;
  for (size_t workers : {size_t{2}, size_t{3}, size_t{5}}) {
    CAPTURE(workers);
    std::vector<uint64_t> scratch(workers, 0);
    auto f = [&](size_t item, size_t slot) { scratch[slot] += item + 1; };
    parallel_for(Parallel(pool.get(), workers, 0), kCount, 1, f);
    uint64_t total = 0;
    for (uint64_t s : scratch) total += s;
    CHECK(total == uint64_t{kCount} * (kCount + 1) / 2);
  }
}

TEST_CASE("core/parallel: work below the threshold runs on the calling thread in slot 0") {
  Pool pool(pthreadpool_create(2));
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
    parallel_for(Parallel(pool.get(), 2, kMinParallelNanoseconds), count, per_item, f);
    CHECK(calls == count);
    CHECK(on_caller);
    CHECK(slot_zero);
  }
}

TEST_CASE("core/parallel: worth() needs a pool of 2+ threads and enough work") {
  Pool one(pthreadpool_create(1));
  Pool two(pthreadpool_create(2));
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
  CHECK(Parallel(two.get(), 2, 0).worth(0));
  CHECK_FALSE(Parallel(two.get(), 2, 500).worth(499));
  CHECK(Parallel(two.get(), 2, 500).worth(500));
}

}  // namespace
}  // namespace edgemt
