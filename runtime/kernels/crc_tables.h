// Table-driven CRC over a reflected polynomial, built at compile time (no
// global constructor), shared by format/crc32.cc (zlib's CRC-32) and
// kernels/crc32c.cc (CRC-32C):
//   SlicingTables  slicing-by-8: t[k][b] is the CRC of byte b followed by k
//                  zero bytes, so eight bytes fold with eight lookups
//   ShiftTables    the linear map "append n zero bytes" to a raw CRC state,
//                  as four byte tables: what combines CRCs of blocks that
//                  were computed side by side (kernels/crc32c.h)
// "Raw" states are the register without the initial and final inversion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace edgemt {
namespace kernels {

struct SlicingTables {
  uint32_t t[8][256];
};

constexpr SlicingTables make_slicing_tables(uint32_t polynomial) {
  SlicingTables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ polynomial : c >> 1;
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

// The raw state after `size` more bytes (little-endian hosts: x86-64, AArch64).
inline uint32_t crc_slicing8(const SlicingTables& tables, uint32_t state, const uint8_t* p,
                             size_t size) {
  while (size >= 8) {
    uint32_t low;
    uint32_t high;
    std::memcpy(&low, p, 4);
    std::memcpy(&high, p + 4, 4);
    low ^= state;
    state = tables.t[7][low & 0xff] ^ tables.t[6][(low >> 8) & 0xff] ^
            tables.t[5][(low >> 16) & 0xff] ^ tables.t[4][low >> 24] ^
            tables.t[3][high & 0xff] ^ tables.t[2][(high >> 8) & 0xff] ^
            tables.t[1][(high >> 16) & 0xff] ^ tables.t[0][high >> 24];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) state = (state >> 8) ^ tables.t[0][(state ^ *p++) & 0xff];
  return state;
}

struct ShiftTables {
  uint32_t t[4][256];
};

namespace crc_detail {

// A linear map on 32-bit states as its 32 columns (column i: the image of bit i).
struct Gf2Matrix {
  uint32_t column[32];
};

constexpr uint32_t apply(const Gf2Matrix& m, uint32_t v) {
  uint32_t out = 0;
  for (int i = 0; v != 0; ++i, v >>= 1) {
    if (v & 1) out ^= m.column[i];
  }
  return out;
}

constexpr Gf2Matrix square(const Gf2Matrix& m) {
  Gf2Matrix out{};
  for (int i = 0; i < 32; ++i) out.column[i] = apply(m, m.column[i]);
  return out;
}

}  // namespace crc_detail

// The map "append `bytes` zero bytes" (bytes a power of two) for `polynomial`.
constexpr ShiftTables make_shift_tables(uint32_t polynomial, size_t bytes) {
  crc_detail::Gf2Matrix m{};
  // One zero bit: a reflected register shifts right, folding bit 0 in.
  m.column[0] = polynomial;
  for (int i = 1; i < 32; ++i) m.column[i] = uint32_t{1} << (i - 1);
  for (int i = 0; i < 3; ++i) m = crc_detail::square(m);  // one zero byte
  for (size_t n = 1; n < bytes; n *= 2) m = crc_detail::square(m);
  ShiftTables tables{};
  for (int k = 0; k < 4; ++k) {
    for (uint32_t b = 0; b < 256; ++b) tables.t[k][b] = crc_detail::apply(m, b << (8 * k));
  }
  return tables;
}

inline uint32_t crc_shift(const ShiftTables& tables, uint32_t state) {
  return tables.t[0][state & 0xff] ^ tables.t[1][(state >> 8) & 0xff] ^
         tables.t[2][(state >> 16) & 0xff] ^ tables.t[3][state >> 24];
}

}  // namespace kernels
}  // namespace edgemt
