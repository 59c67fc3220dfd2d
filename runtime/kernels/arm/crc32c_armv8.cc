// CRC-32C with ARMv8's CRC32C instructions (compiled with +crc; optional in
// ARMv8.0, present on Cortex-A53 and later; chosen when HWCAP_CRC32 says so).
// Three chains over three adjacent blocks, joined as in x86/crc32c_sse42.cc.
#include <arm_acle.h>

#include <cstring>

#include "kernels/crc32c.h"

namespace edgemt {
namespace kernels {
namespace {

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

uint32_t crc32c_raw_armv8(uint32_t state, const uint8_t* p, size_t size) {
  while (size > 0 && reinterpret_cast<uintptr_t>(p) % 8 != 0) {
    state = __crc32cb(state, *p++);
    --size;
  }
  while (size >= 3 * kCrc32cBlock) {
    uint32_t a = state;
    uint32_t b = 0;
    uint32_t c = 0;
    for (const uint8_t* end = p + kCrc32cBlock; p < end; p += 8) {
      a = __crc32cd(a, load64(p));
      b = __crc32cd(b, load64(p + kCrc32cBlock));
      c = __crc32cd(c, load64(p + 2 * kCrc32cBlock));
    }
    state = crc32c_shift_block(crc32c_shift_block(a) ^ b) ^ c;
    p += 2 * kCrc32cBlock;
    size -= 3 * kCrc32cBlock;
  }
  for (; size >= 8; p += 8, size -= 8) state = __crc32cd(state, load64(p));
  while (size-- > 0) state = __crc32cb(state, *p++);
  return state;
}

}  // namespace kernels
}  // namespace edgemt
