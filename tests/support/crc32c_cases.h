// Shared by the CRC-32C tests: a bit-at-a-time reference, and a check that
// a raw-state kernel (kernels/crc32c.h) equals it on every short length and
// alignment and on lengths around the three-block boundaries of the
// interleaved variants.
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/crc32c.h"

namespace edgemt::testing {

inline uint32_t naive_crc32c(const uint8_t* data, size_t size, uint32_t crc = 0) {
  uint32_t c = ~crc;
  for (size_t i = 0; i < size; ++i) {
    c ^= data[i];
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return ~c;
}

using RawCrc32c = uint32_t (*)(uint32_t state, const uint8_t* data, size_t size);

inline void check_raw_crc32c_kernel(RawCrc32c kernel) {
  const size_t block = kernels::kCrc32cBlock;
  std::vector<uint8_t> bytes(8 * block + 64);
  std::mt19937 rng(11);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 70; ++n) lengths.push_back(n);
  for (size_t k = 1; k <= 2; ++k) {
    for (size_t n : {3 * k * block - 9, 3 * k * block - 1, 3 * k * block, 3 * k * block + 1,
                     3 * k * block + 7, 3 * k * block + 8, 3 * k * block + 45}) {
      lengths.push_back(n);
    }
  }
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t n : lengths) {
      if (offset + n > bytes.size()) continue;
      CAPTURE(offset);
      CAPTURE(n);
      const uint8_t* p = bytes.data() + offset;
      for (uint32_t start : {0u, 0x12345678u}) {
        CHECK(~kernel(~start, p, n) == naive_crc32c(p, n, start));
      }
    }
  }
}

}  // namespace edgemt::testing
