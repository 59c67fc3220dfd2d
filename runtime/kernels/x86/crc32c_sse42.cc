// CRC-32C with SSE4.2's crc32 instruction (compiled with -msse4.2).
//
// crc32 r64 retires one per cycle but takes three: one chain of them runs at
// a third of the speed the unit allows. Three chains over three adjacent
// kCrc32cBlock-byte blocks run at full speed; the second and third start
// from 0 and are joined by appending a block of zero bytes to the state
// before them (kernels/crc_tables.h: CRC(A B) = shift_|B|(CRC(A)) ^ CRC_0(B)).
#include <nmmintrin.h>

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

uint32_t crc32c_raw_sse42(uint32_t state, const uint8_t* p, size_t size) {
  while (size > 0 && reinterpret_cast<uintptr_t>(p) % 8 != 0) {
    state = _mm_crc32_u8(state, *p++);
    --size;
  }
  while (size >= 3 * kCrc32cBlock) {
    uint64_t a = state;
    uint64_t b = 0;
    uint64_t c = 0;
    for (const uint8_t* end = p + kCrc32cBlock; p < end; p += 8) {
      a = _mm_crc32_u64(a, load64(p));
      b = _mm_crc32_u64(b, load64(p + kCrc32cBlock));
      c = _mm_crc32_u64(c, load64(p + 2 * kCrc32cBlock));
    }
    state = crc32c_shift_block(crc32c_shift_block(static_cast<uint32_t>(a)) ^
                               static_cast<uint32_t>(b)) ^
            static_cast<uint32_t>(c);
    p += 2 * kCrc32cBlock;
    size -= 3 * kCrc32cBlock;
  }
  uint64_t tail = state;
  for (; size >= 8; p += 8, size -= 8) tail = _mm_crc32_u64(tail, load64(p));
  state = static_cast<uint32_t>(tail);
  while (size-- > 0) state = _mm_crc32_u8(state, *p++);
  return state;
}

}  // namespace kernels
}  // namespace edgemt
