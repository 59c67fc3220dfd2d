#include "core/prefaulted_memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace edgemt {
namespace {

constexpr size_t kMaxAlignment = 4096;  // mmap returns page-aligned memory

// Stored right before the returned block: where the allocation starts and,
// for a mapping, its length (0: the base came from malloc).
struct Header {
  void* base;
  size_t mapped_length;
};

constexpr size_t round_up(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

void* allocate_prefaulted(size_t alignment, size_t size) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment) {
    return nullptr;
  }
  // The block starts at the first aligned address with room for the Header
  // before it; from a page-aligned base that is `offset` bytes in.
  const size_t offset = round_up(sizeof(Header), alignment);
  if (size > SIZE_MAX - offset - alignment - kMaxAlignment) return nullptr;

  uint8_t* block = nullptr;
  Header header{};
  if (size >= kPrefaultThreshold) {
    const size_t length = round_up(offset + size, kMaxAlignment);
    void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (base == MAP_FAILED) return nullptr;
    block = static_cast<uint8_t*>(base) + offset;
    header = {base, length};
  } else {
    // malloc aligns to at least alignof(max_align_t); pad for the rest.
    void* base = std::malloc(offset + size + alignment);
    if (base == nullptr) return nullptr;
    const uintptr_t first = reinterpret_cast<uintptr_t>(base) + sizeof(Header);
    block = reinterpret_cast<uint8_t*>(round_up(first, alignment));
    header = {base, 0};
  }
  *reinterpret_cast<Header*>(block - sizeof(Header)) = header;
  return block;
}

void free_prefaulted(void* block) {
  if (block == nullptr) return;
  const Header header = *reinterpret_cast<const Header*>(static_cast<uint8_t*>(block) -
                                                         sizeof(Header));
  if (header.mapped_length != 0) {
    (void)::munmap(header.base, header.mapped_length);
  } else {
    std::free(header.base);
  }
}

}  // namespace edgemt
