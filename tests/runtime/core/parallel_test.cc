// parallel_for on a real pthreadpool and on none: every item runs exactly
// once, the slot is below the worker count (and the item count), each slot
// owns one contiguous slice run by one thread (per-slot scratch is safe),
// and counts of 0 and below the worker count work.
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
  parallel_for(pool, workers, count, f);
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
  parallel_for(pool.get(), 2, 0, f);
  parallel_for(nullptr, 2, 0, f);
  parallel_for(pool.get(), 0, 0, f);
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
    parallel_for(pool.get(), workers, kCount, f);
    uint64_t total = 0;
    for (uint64_t s : scratch) total += s;
    CHECK(total == uint64_t{kCount} * (kCount + 1) / 2);
  }
}

}  // namespace
}  // namespace edgemt
