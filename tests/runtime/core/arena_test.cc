// Arena: the measuring and the real pass lay buffers out identically, every
// buffer is 64-byte aligned with kAlignment spare bytes after it, and a real
// arena that is too small says so instead of handing out memory it lacks.
#include "core/arena.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace edgemt {
namespace {

// Buffer sizes in bytes, with odd, zero and exact multiples of 64.
const std::vector<size_t> kSizes = {1, 0, 64, 100, 4096, 3, 63, 65, 128, 7};

// The layout written out by hand: each buffer starts at the next multiple of
// 64 at or after the end of the previous one's spare bytes.
struct Expected {
  std::vector<size_t> offsets;
  size_t used = 0;
};

Expected naive_layout(const std::vector<size_t>& sizes) {
  Expected e;
  size_t end = 0;
  for (size_t bytes : sizes) {
    size_t start = 0;
    while (start < end) start += 64;
    e.offsets.push_back(start);
    end = start + bytes + 64;
  }
  e.used = end;
  return e;
}

// 64-byte aligned heap block (std::aligned_alloc wants a multiple of 64).
struct Block {
  explicit Block(size_t bytes)
      : data(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 64) / 64 * 64))) {}
  ~Block() { std::free(data); }
  uint8_t* data;
};

TEST_CASE("core/arena: a measuring arena returns nullptr and grows by the naive layout") {
  Arena arena;
  CHECK(arena.measuring());
  CHECK(arena.used() == 0);
  const Expected expected = naive_layout(kSizes);
  for (size_t bytes : kSizes) CHECK(arena.allocate_bytes(bytes) == nullptr);
  CHECK(arena.used() == expected.used);
  CHECK_FALSE(arena.overflowed());
}

TEST_CASE("core/arena: the real pass gives the measured offsets and sizes") {
  Arena measure;
  for (size_t bytes : kSizes) (void)measure.allocate_bytes(bytes);
  const Expected expected = naive_layout(kSizes);
  REQUIRE(measure.used() == expected.used);

  Block block(measure.used());
  REQUIRE(block.data != nullptr);
  Arena real(block.data, measure.used());
  CHECK_FALSE(real.measuring());
  std::vector<uint8_t*> pointers;
  for (size_t i = 0; i < kSizes.size(); ++i) {
    CAPTURE(i);
    uint8_t* p = static_cast<uint8_t*>(real.allocate_bytes(kSizes[i]));
    REQUIRE(p != nullptr);
    CHECK(static_cast<size_t>(p - block.data) == expected.offsets[i]);
    CHECK(reinterpret_cast<uintptr_t>(p) % Arena::kAlignment == 0);
    pointers.push_back(p);
  }
  CHECK(real.used() == measure.used());
  CHECK_FALSE(real.overflowed());

  // Spare bytes: at least kAlignment between a buffer's end and the next
  // buffer, and after the last one inside the arena.
  for (size_t i = 0; i + 1 < kSizes.size(); ++i) {
    CAPTURE(i);
    CHECK(pointers[i + 1] - (pointers[i] + kSizes[i]) >= static_cast<ptrdiff_t>(Arena::kAlignment));
  }
  CHECK(block.data + real.used() - (pointers.back() + kSizes.back()) >=
        static_cast<ptrdiff_t>(Arena::kAlignment));

  // Buffers plus their spare bytes are disjoint: fill each with its own
  // byte and read every one back intact.
  for (size_t i = 0; i < kSizes.size(); ++i) {
    std::memset(pointers[i], static_cast<int>(i + 1), kSizes[i] + Arena::kAlignment);
  }
  for (size_t i = 0; i < kSizes.size(); ++i) {
    CAPTURE(i);
    for (size_t k = 0; k < kSizes[i] + Arena::kAlignment; ++k) {
      if (pointers[i][k] != static_cast<uint8_t>(i + 1)) {
        FAIL("buffer " << i << " byte " << k << " was overwritten");
        break;
      }
    }
  }
}

TEST_CASE("core/arena: allocate<T> reserves count times sizeof(T) bytes") {
  Arena typed;
  Arena raw;
  (void)typed.allocate<double>(13);
  (void)raw.allocate_bytes(13 * sizeof(double));
  (void)typed.allocate<int32_t>(5);
  (void)raw.allocate_bytes(5 * sizeof(int32_t));
  CHECK(typed.used() == raw.used());

  Block block(typed.used());
  Arena real(block.data, typed.used());
  double* d = real.allocate<double>(13);
  int32_t* n = real.allocate<int32_t>(5);
  REQUIRE(d != nullptr);
  REQUIRE(n != nullptr);
  CHECK(reinterpret_cast<uint8_t*>(n) - reinterpret_cast<uint8_t*>(d) == 192);  // 104 + 64 -> 192
  CHECK(reinterpret_cast<uintptr_t>(n) % 64 == 0);
}

TEST_CASE("core/arena: a real arena one byte too small overflows on the last buffer only") {
  Arena measure;
  for (size_t bytes : kSizes) (void)measure.allocate_bytes(bytes);
  Block block(measure.used());
  Arena small(block.data, measure.used() - 1);
  for (size_t i = 0; i + 1 < kSizes.size(); ++i) {
    CAPTURE(i);
    CHECK(small.allocate_bytes(kSizes[i]) != nullptr);
    CHECK_FALSE(small.overflowed());
  }
  CHECK(small.allocate_bytes(kSizes.back()) == nullptr);
  CHECK(small.overflowed());
  // used() still reports what the layout needs, so the caller can say how much.
  CHECK(small.used() == measure.used());
}

TEST_CASE("core/arena: a full arena stays overflowed and a zero-capacity one fails at once") {
  Block block(256);
  Arena arena(block.data, 256);
  CHECK(arena.allocate_bytes(100) != nullptr);  // [0, 164)
  CHECK(arena.allocate_bytes(100) == nullptr);  // would end at 192 + 164
  CHECK(arena.overflowed());
  CHECK(arena.allocate_bytes(1) == nullptr);
  CHECK(arena.overflowed());

  Arena empty(block.data, 0);
  CHECK(empty.allocate_bytes(0) == nullptr);  // even 0 bytes need the spare bytes
  CHECK(empty.overflowed());

  // The spare bytes count: 64 - 64 = 0 usable bytes fit exactly in 64.
  Arena exact(block.data, 64);
  CHECK(exact.allocate_bytes(0) == block.data);
  CHECK_FALSE(exact.overflowed());
  CHECK(exact.allocate_bytes(0) == nullptr);
  CHECK(exact.overflowed());
}

}  // namespace
}  // namespace edgemt
