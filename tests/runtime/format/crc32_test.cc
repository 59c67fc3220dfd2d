// crc32 against the standard check value, zlib's results, and a naive
// bit-at-a-time reference on every length and alignment.
#include "format/crc32.h"

#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <vector>

namespace edgemt {
namespace {

uint32_t naive_crc32(const uint8_t* data, size_t size) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < size; ++i) {
    c ^= data[i];
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
  }
  return ~c;
}

TEST_CASE("format/crc32: check values (zlib.crc32)") {
  CHECK(crc32("", 0) == 0u);
  CHECK(crc32("123456789", 9) == 0xCBF43926u);
  CHECK(crc32("The quick brown fox jumps over the lazy dog", 43) == 0x414FA339u);
}

TEST_CASE("format/crc32: equals a bitwise reference at every length and alignment, and chains") {
  std::mt19937 rng(7);
  std::vector<uint8_t> bytes(300);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  for (size_t start = 0; start < 8; ++start) {
    for (size_t size = 0; start + size <= bytes.size(); size += 13) {
      CAPTURE(start);
      CAPTURE(size);
      CHECK(crc32(bytes.data() + start, size) == naive_crc32(bytes.data() + start, size));
    }
  }
  const uint32_t whole = crc32(bytes.data(), bytes.size());
  CHECK(crc32(bytes.data() + 100, 200, crc32(bytes.data(), 100)) == whole);
}

}  // namespace
}  // namespace edgemt
