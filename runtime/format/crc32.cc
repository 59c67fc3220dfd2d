#include "format/crc32.h"

#include "kernels/crc_tables.h"

namespace edgemt {
namespace {

constexpr kernels::SlicingTables kTables = kernels::make_slicing_tables(0xEDB88320u);

}  // namespace

uint32_t crc32(const void* data, size_t size, uint32_t crc) {
  return ~kernels::crc_slicing8(kTables, ~crc, static_cast<const uint8_t*>(data), size);
}

}  // namespace edgemt
