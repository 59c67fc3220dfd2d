#include "format/weight_values.h"

#include <cstring>

namespace edgemt {
namespace {

constexpr size_t kBlock = 1024;  // elements per branch-free pass

// First index in [0, count) whose element (read as Bits) satisfies
// (bits & mask) == match. Elements are memcpy'd: the data may sit at any
// offset (a tensor's bytes are 64-aligned, but callers need not know).
template <typename Bits, Bits kMask, Bits kMatch>
size_t find_first(const void* data, size_t count) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t begin = 0; begin < count; begin += kBlock) {
    const size_t len = count - begin < kBlock ? count - begin : kBlock;
    Bits block[kBlock];
    std::memcpy(block, bytes + begin * sizeof(Bits), len * sizeof(Bits));
    // OR-ed in the element type (a bool accumulator does not vectorize:
    // 1.7 GB/s for int8 against ~20 GB/s this way).
    Bits any = 0;
    for (size_t i = 0; i < len; ++i) any |= static_cast<Bits>((block[i] & kMask) == kMatch);
    if (any == 0) continue;
    for (size_t i = 0; i < len; ++i) {
      if ((block[i] & kMask) == kMatch) return begin + i;
    }
  }
  return count;
}

}  // namespace

// An all-ones exponent: 0x7f800000 in binary32, 0x7c00 in binary16.
size_t find_non_finite_f32(const void* data, size_t count) {
  return find_first<uint32_t, 0x7f800000u, 0x7f800000u>(data, count);
}

size_t find_non_finite_f16(const void* data, size_t count) {
  return find_first<uint16_t, 0x7c00u, 0x7c00u>(data, count);
}

size_t find_int8_min(const void* data, size_t count) {
  return find_first<uint8_t, 0xffu, 0x80u>(data, count);
}

}  // namespace edgemt
