// prefaulted_memory: blocks are aligned and usable over their whole size on
// both sides of the threshold, large blocks are resident before the first
// touch (the point of prefaulting), and bad alignments are refused.
#include "core/prefaulted_memory.h"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace edgemt {
namespace {

// Pages of [block, block + size) that are resident, per mincore().
size_t resident_pages(const void* block, size_t size, size_t* pages_in_range) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(block) / page * page;
  const uintptr_t end = reinterpret_cast<uintptr_t>(block) + size;
  const size_t count = (end - first + page - 1) / page;
  std::vector<unsigned char> residency(count);
  REQUIRE(mincore(reinterpret_cast<void*>(first), end - first, residency.data()) == 0);
  size_t resident = 0;
  for (unsigned char r : residency) resident += r & 1;
  *pages_in_range = count;
  return resident;
}

TEST_CASE("core/prefaulted_memory: aligned and writable on both sides of the threshold") {
  const size_t sizes[] = {0, 1, 63, 4096, kPrefaultThreshold - 1, kPrefaultThreshold,
                          kPrefaultThreshold + 1, size_t{3} << 20};
  const size_t alignments[] = {1, 8, 16, 64, 4096};
  for (size_t size : sizes) {
    for (size_t alignment : alignments) {
      CAPTURE(size);
      CAPTURE(alignment);
      auto* block = static_cast<uint8_t*>(allocate_prefaulted(alignment, size));
      REQUIRE(block != nullptr);
      CHECK(reinterpret_cast<uintptr_t>(block) % alignment == 0);
      // Every byte is ours: write a pattern over all of it and read it back.
      for (size_t i = 0; i < size; ++i) block[i] = static_cast<uint8_t>(i * 7 + 1);
      bool intact = true;
      for (size_t i = 0; i < size; ++i) intact &= block[i] == static_cast<uint8_t>(i * 7 + 1);
      CHECK(intact);
      free_prefaulted(block);
    }
  }
}

TEST_CASE("core/prefaulted_memory: live blocks do not overlap") {
  const size_t sizes[] = {24, kPrefaultThreshold, 100, kPrefaultThreshold * 3, 0};
  std::vector<uint8_t*> blocks;
  for (size_t size : sizes) {
    blocks.push_back(static_cast<uint8_t*>(allocate_prefaulted(64, size)));
    REQUIRE(blocks.back() != nullptr);
    std::memset(blocks.back(), static_cast<int>(blocks.size()), size);
  }
  for (size_t b = 0; b < blocks.size(); ++b) {
    bool intact = true;
    for (size_t i = 0; i < sizes[b]; ++i) intact &= blocks[b][i] == static_cast<uint8_t>(b + 1);
    CHECK(intact);
  }
  for (uint8_t* block : blocks) free_prefaulted(block);
}

TEST_CASE("core/prefaulted_memory: a large block is resident before it is touched") {
  const size_t size = size_t{4} << 20;
  void* block = allocate_prefaulted(64, size);
  REQUIRE(block != nullptr);
  size_t pages = 0;
  const size_t resident = resident_pages(block, size, &pages);
  // qemu-user (platforms/cmake/qemu-aarch64-run sets the variable) maps
  // anonymous memory itself and drops MAP_POPULATE; a kernel honours it.
  if (std::getenv("EDGEMT_UNDER_QEMU_USER") != nullptr) {
    MESSAGE("NOT CHECKED under qemu-user (it ignores MAP_POPULATE): " << resident << " of "
                                                                       << pages << " pages resident");
  } else {
    CHECK(resident == pages);
  }
  free_prefaulted(block);
}

TEST_CASE("core/prefaulted_memory: unsupported alignments give nullptr, null frees are no-ops") {
  CHECK(allocate_prefaulted(0, 16) == nullptr);
  CHECK(allocate_prefaulted(3, 16) == nullptr);
  CHECK(allocate_prefaulted(8192, kPrefaultThreshold) == nullptr);
  CHECK(allocate_prefaulted(64, SIZE_MAX - 10) == nullptr);
  free_prefaulted(nullptr);
}

}  // namespace
}  // namespace edgemt
