// Arena: buffers live at the same time never share a byte (spare bytes
// included), buffers never live together may; the binding pass returns the
// planned offsets and refuses a call that differs from the plan; the size is
// the greedy placement's, checked against a naive placement written here.
#include "core/arena.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

namespace edgemt {
namespace {

struct Request {
  size_t bytes;
  Lifetime lifetime;
};

size_t extent(size_t bytes) { return (bytes + 2 * Arena::kAlignment - 1) / 64 * 64; }

bool live_together(Lifetime a, Lifetime b) { return a.first <= b.last && b.first <= a.last; }

// 64-byte aligned heap block, movable.
struct Free {
  void operator()(uint8_t* p) const { std::free(p); }
};
struct Block {
  explicit Block(size_t bytes)
      : owner(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 64) / 64 * 64))),
        data(owner.get()) {}
  std::unique_ptr<uint8_t, Free> owner;
  uint8_t* data;
};

// Plans and binds `requests`; returns the pointers (empty on failure).
std::vector<uint8_t*> plan_and_bind(Arena* arena, const std::vector<Request>& requests, Block* block) {
  arena->reset();
  for (const Request& r : requests) CHECK(arena->allocate_bytes(r.bytes, r.lifetime) == nullptr);
  if (!arena->finish_plan()) return {};
  *block = Block(arena->size());
  arena->bind(block->data);
  std::vector<uint8_t*> pointers;
  for (const Request& r : requests) {
    pointers.push_back(static_cast<uint8_t*>(arena->allocate_bytes(r.bytes, r.lifetime)));
  }
  CHECK_FALSE(arena->overflowed());
  return pointers;
}

// Every pair live together is disjoint, spare bytes included; every buffer
// is aligned and inside the arena.
void check_layout(const Arena& arena, const std::vector<Request>& requests,
                  const std::vector<uint8_t*>& p, const uint8_t* base) {
  for (size_t i = 0; i < requests.size(); ++i) {
    CAPTURE(i);
    REQUIRE(p[i] != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(p[i]) % Arena::kAlignment == 0);
    CHECK(p[i] + requests[i].bytes + Arena::kAlignment <= base + arena.size());
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!live_together(requests[i].lifetime, requests[j].lifetime)) continue;
      CAPTURE(j);
      const bool apart = p[i] + requests[i].bytes + Arena::kAlignment <= p[j] ||
                         p[j] + requests[j].bytes + Arena::kAlignment <= p[i];
      CHECK(apart);
    }
  }
}

// What the arena must at least hold: the largest sum of extents live at one step.
size_t lower_bound(const std::vector<Request>& requests) {
  size_t best = 0;
  for (uint16_t step = 0; step < 64; ++step) {
    size_t sum = 0;
    for (const Request& r : requests) {
      if (r.lifetime.first <= step && step <= r.lifetime.last) sum += extent(r.bytes);
    }
    best = std::max(best, sum);
  }
  return best;
}

TEST_CASE("core/arena: buffers live together are disjoint, spare bytes included") {
  const std::vector<Request> requests = {
      {100, {0, 3}}, {0, {1, 1}}, {64, {1, 2}}, {4096, {2, 2}}, {63, {0, 0}}, {65, {3, 3}}, {1, {0, 3}},
  };
  Arena arena;
  Block block(0);
  const std::vector<uint8_t*> p = plan_and_bind(&arena, requests, &block);
  REQUIRE(p.size() == requests.size());
  check_layout(arena, requests, p, block.data);
  // Fill the buffers live at each step with their own byte and read back.
  for (uint16_t step = 0; step <= 3; ++step) {
    CAPTURE(step);
    for (size_t i = 0; i < requests.size(); ++i) {
      if (live_together(requests[i].lifetime, {step, step})) {
        std::memset(p[i], static_cast<int>(i + 1), requests[i].bytes + Arena::kAlignment);
      }
    }
    for (size_t i = 0; i < requests.size(); ++i) {
      if (!live_together(requests[i].lifetime, {step, step})) continue;
      for (size_t k = 0; k < requests[i].bytes + Arena::kAlignment; ++k) {
        if (p[i][k] != static_cast<uint8_t>(i + 1)) {
          FAIL("buffer " << i << " byte " << k << " was overwritten at step " << step);
          break;
        }
      }
    }
  }
}

TEST_CASE("core/arena: buffers never live together share memory") {
  // Two steps, each with one 1000-byte buffer: one buffer's room serves both.
  Arena arena;
  (void)arena.allocate_bytes(1000, {0, 0});
  (void)arena.allocate_bytes(1000, {1, 1});
  REQUIRE(arena.finish_plan());
  CHECK(arena.size() == extent(1000));
  CHECK(arena.unshared_size() == 2 * extent(1000));
  // The same with overlapping lifetimes: side by side.
  arena.reset();
  (void)arena.allocate_bytes(1000, {0, 1});
  (void)arena.allocate_bytes(1000, {1, 2});
  REQUIRE(arena.finish_plan());
  CHECK(arena.size() == 2 * extent(1000));
}

TEST_CASE("core/arena: the greedy plan of random requests is valid and near the lower bound") {
  std::mt19937 rng(5);
  for (int round = 0; round < 50; ++round) {
    CAPTURE(round);
    std::vector<Request> requests(1 + rng() % 60);
    for (Request& r : requests) {
      r.bytes = rng() % 3 == 0 ? rng() % 100 : rng() % 100000;
      const uint16_t a = static_cast<uint16_t>(rng() % 12), b = static_cast<uint16_t>(rng() % 12);
      r.lifetime = {std::min(a, b), std::max(a, b)};
    }
    Arena arena;
    Block block(0);
    const std::vector<uint8_t*> p = plan_and_bind(&arena, requests, &block);
    REQUIRE(p.size() == requests.size());
    check_layout(arena, requests, p, block.data);
    size_t unshared = 0;
    for (const Request& r : requests) unshared += extent(r.bytes);
    CHECK(arena.unshared_size() == unshared);
    CHECK(arena.size() >= lower_bound(requests));
    CHECK(arena.size() <= unshared);
    CHECK(arena.size() % Arena::kAlignment == 0);
  }
}

TEST_CASE("core/arena: one lifetime for all gives the requests one after another") {
  const std::vector<size_t> sizes = {1, 0, 64, 100, 4096, 3};
  Arena arena;
  for (size_t bytes : sizes) (void)arena.allocate_bytes(bytes, {0, 5});
  REQUIRE(arena.finish_plan());
  size_t sum = 0;
  for (size_t bytes : sizes) sum += extent(bytes);
  CHECK(arena.size() == sum);
  CHECK(arena.unshared_size() == sum);
}

TEST_CASE("core/arena: allocate<T> reserves count times sizeof(T) bytes") {
  Arena arena;
  (void)arena.allocate<double>(13, {0, 0});  // 104 bytes -> extent 192
  (void)arena.allocate<int32_t>(5, {0, 0});  // 20 -> 128
  REQUIRE(arena.finish_plan());
  CHECK(arena.size() == 192 + 128);
}

TEST_CASE("core/arena: a binding call unlike its plan, or one too many, overflows") {
  Block block(4096);
  Arena arena;
  (void)arena.allocate_bytes(100, {0, 1});
  (void)arena.allocate_bytes(200, {1, 2});
  REQUIRE(arena.finish_plan());

  arena.bind(block.data);
  CHECK(arena.allocate_bytes(100, {0, 1}) != nullptr);
  CHECK(arena.allocate_bytes(300, {1, 2}) == nullptr);  // other size
  CHECK(arena.overflowed());

  arena.reset();
  (void)arena.allocate_bytes(100, {0, 1});
  REQUIRE(arena.finish_plan());
  arena.bind(block.data);
  CHECK(arena.allocate_bytes(100, {0, 2}) == nullptr);  // other lifetime
  CHECK(arena.overflowed());

  arena.reset();
  (void)arena.allocate_bytes(100, {0, 1});
  REQUIRE(arena.finish_plan());
  arena.bind(block.data);
  CHECK(arena.allocate_bytes(100, {0, 1}) == block.data);
  CHECK_FALSE(arena.overflowed());
  CHECK(arena.allocate_bytes(1, {0, 0}) == nullptr);  // not planned
  CHECK(arena.overflowed());
}

TEST_CASE("core/arena: bad plans are refused") {
  Arena arena;
  (void)arena.allocate_bytes(10, {3, 2});  // first > last
  CHECK(arena.overflowed());
  CHECK_FALSE(arena.finish_plan());

  arena.reset();
  for (size_t i = 0; i < Arena::kMaxRequests; ++i) (void)arena.allocate_bytes(1, {0, 0});
  CHECK_FALSE(arena.overflowed());
  (void)arena.allocate_bytes(1, {0, 0});  // one too many
  CHECK(arena.overflowed());
  CHECK_FALSE(arena.finish_plan());

  arena.reset();
  (void)arena.allocate_bytes(SIZE_MAX / 2 + 1, {0, 0});
  CHECK(arena.overflowed());

  arena.reset();
  CHECK(arena.finish_plan());  // empty: size 0
  CHECK(arena.size() == 0);
  arena.bind(nullptr);
  CHECK(arena.overflowed());
}

}  // namespace
}  // namespace edgemt
