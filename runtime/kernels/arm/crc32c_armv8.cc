// CRC-32C with ARMv8's CRC32C instructions (compiled with +crc; optional in
// ARMv8.0, present on Cortex-A53 and later; chosen when HWCAP_CRC32 says so),
// three chains at once (kernels/crc32c_three_way.h).
#include <arm_acle.h>

#include "kernels/crc32c.h"
#include "kernels/crc32c_three_way.h"

namespace edgemt {
namespace kernels {

uint32_t crc32c_raw_armv8(uint32_t state, const uint8_t* data, size_t size) {
  return crc32c_three_way(
      state, data, size, [](uint32_t s, uint8_t byte) { return __crc32cb(s, byte); },
      [](uint32_t s, uint64_t bytes) { return __crc32cd(s, bytes); });
}

}  // namespace kernels
}  // namespace edgemt
