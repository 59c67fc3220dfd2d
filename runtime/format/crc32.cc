#include "format/crc32.h"

#include <cstring>

namespace edgemt {
namespace {

struct Tables {
  uint32_t t[8][256];
};

// t[0] is the byte-at-a-time table; t[k][b] is the CRC of byte b followed by
// k zero bytes, so eight bytes are folded with eight lookups at once.
constexpr Tables make_tables() {
  Tables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    tables.t[0][b] = c;
  }
  for (uint32_t b = 0; b < 256; ++b) {
    for (int k = 1; k < 8; ++k) {
      const uint32_t previous = tables.t[k - 1][b];
      tables.t[k][b] = (previous >> 8) ^ tables.t[0][previous & 0xff];
    }
  }
  return tables;
}

constexpr Tables kTables = make_tables();

}  // namespace

uint32_t crc32(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (size >= 8) {
    uint32_t low;
    uint32_t high;
    std::memcpy(&low, p, 4);  // little-endian hosts (x86-64, AArch64)
    std::memcpy(&high, p + 4, 4);
    low ^= c;
    c = kTables.t[7][low & 0xff] ^ kTables.t[6][(low >> 8) & 0xff] ^
        kTables.t[5][(low >> 16) & 0xff] ^ kTables.t[4][low >> 24] ^
        kTables.t[3][high & 0xff] ^ kTables.t[2][(high >> 8) & 0xff] ^
        kTables.t[1][(high >> 16) & 0xff] ^ kTables.t[0][high >> 24];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) c = (c >> 8) ^ kTables.t[0][(c ^ *p++) & 0xff];
  return ~c;
}

}  // namespace edgemt
