// CRC-32C with SSE4.2's crc32 instruction (compiled with -msse4.2), three
// chains at once (kernels/crc32c_three_way.h).
#include <nmmintrin.h>

#include "kernels/crc32c.h"
#include "kernels/crc32c_three_way.h"

namespace edgemt {
namespace kernels {

uint32_t crc32c_raw_sse42(uint32_t state, const uint8_t* data, size_t size) {
  return crc32c_three_way(
      state, data, size, [](uint32_t s, uint8_t byte) { return _mm_crc32_u8(s, byte); },
      [](uint32_t s, uint64_t bytes) { return static_cast<uint32_t>(_mm_crc32_u64(s, bytes)); });
}

}  // namespace kernels
}  // namespace edgemt
