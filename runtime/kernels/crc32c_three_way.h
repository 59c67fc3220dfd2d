// The loop the hardware CRC-32C kernels share (x86/crc32c_sse42.cc,
// arm/crc32c_armv8.cc), included by each and compiled with its flags.
//
// One chain of CRC instructions runs at a third of the speed the unit
// allows (latency three times the throughput). Three chains over three
// adjacent kCrc32cBlock-byte blocks run at full speed; the second and third
// start from 0 and are joined by appending a block of zero bytes to the
// state before them (kernels/crc_tables.h: CRC(A B) = shift_|B|(CRC(A)) ^
// CRC_0(B)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/crc32c.h"

namespace edgemt {
namespace kernels {

// Crc8(state, byte) and Crc64(state, 8 bytes) are the CPU's instructions on
// raw states; returns the raw state after `size` more bytes.
template <typename Crc8, typename Crc64>
inline uint32_t crc32c_three_way(uint32_t state, const uint8_t* p, size_t size, Crc8 crc8,
                                 Crc64 crc64) {
  auto load64 = [](const uint8_t* at) {
    uint64_t v;
    std::memcpy(&v, at, 8);
    return v;
  };
  while (size > 0 && reinterpret_cast<uintptr_t>(p) % 8 != 0) {
    state = crc8(state, *p++);
    --size;
  }
  while (size >= 3 * kCrc32cBlock) {
    uint32_t a = state;
    uint32_t b = 0;
    uint32_t c = 0;
    for (const uint8_t* end = p + kCrc32cBlock; p < end; p += 8) {
      a = crc64(a, load64(p));
      b = crc64(b, load64(p + kCrc32cBlock));
      c = crc64(c, load64(p + 2 * kCrc32cBlock));
    }
    state = crc32c_shift_block(crc32c_shift_block(a) ^ b) ^ c;
    p += 2 * kCrc32cBlock;
    size -= 3 * kCrc32cBlock;
  }
  for (; size >= 8; p += 8, size -= 8) state = crc64(state, load64(p));
  while (size-- > 0) state = crc8(state, *p++);
  return state;
}

}  // namespace kernels
}  // namespace edgemt
