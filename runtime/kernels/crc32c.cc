#include "kernels/crc32c.h"

#include "core/cpu_features.h"
#include "kernels/crc_tables.h"

namespace edgemt {
namespace kernels {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;
constexpr SlicingTables kSlicing = make_slicing_tables(kPolynomial);
constexpr ShiftTables kShiftBlock = make_shift_tables(kPolynomial, kCrc32cBlock);

}  // namespace

uint32_t crc32c_shift_block(uint32_t raw_state) { return crc_shift(kShiftBlock, raw_state); }

uint32_t crc32c_portable(const void* data, size_t size, uint32_t crc) {
  return ~crc_slicing8(kSlicing, ~crc, static_cast<const uint8_t*>(data), size);
}

uint32_t crc32c(const void* data, size_t size, uint32_t crc) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  const CpuFeatures& cpu = cpu_features();
#if defined(__x86_64__)
  if (cpu.sse42) return ~crc32c_raw_sse42(~crc, bytes, size);
#elif defined(__aarch64__)
  if (cpu.crc32) return ~crc32c_raw_armv8(~crc, bytes, size);
#endif
  (void)cpu;
  return crc32c_portable(bytes, size, crc);
}

}  // namespace kernels
}  // namespace edgemt
