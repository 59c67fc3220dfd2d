// CRC-32C: the portable kernel and the dispatched one against the standard
// check value and a bit-at-a-time reference (tests/support/crc32c_cases.h),
// chaining, and the block shift the interleaved variants join with.
#include "kernels/crc32c.h"

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "support/crc32c_cases.h"

namespace edgemt::kernels {
namespace {

uint32_t portable_raw(uint32_t state, const uint8_t* data, size_t size) {
  return ~crc32c_portable(data, size, ~state);
}

uint32_t dispatched_raw(uint32_t state, const uint8_t* data, size_t size) {
  return ~crc32c(data, size, ~state);
}

TEST_CASE("kernels/crc32c: check values (RFC 3720, google_crc32c)") {
  CHECK(crc32c("", 0) == 0u);
  CHECK(crc32c("123456789", 9) == 0xE3069283u);
  CHECK(crc32c_portable("123456789", 9) == 0xE3069283u);
  const std::vector<uint8_t> zeros(32, 0);
  const std::vector<uint8_t> ones(32, 0xff);
  CHECK(crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);  // RFC 3720 B.4
  CHECK(crc32c(ones.data(), ones.size()) == 0x62A8AB43u);
}

TEST_CASE("kernels/crc32c: the portable kernel equals the bitwise reference everywhere") {
  testing::check_raw_crc32c_kernel(portable_raw);
}

TEST_CASE("kernels/crc32c: the dispatched kernel equals the bitwise reference everywhere") {
  testing::check_raw_crc32c_kernel(dispatched_raw);
}

TEST_CASE("kernels/crc32c: chains (crc of A then B is crc of A followed by B)") {
  std::vector<uint8_t> bytes(5 * kCrc32cBlock + 3);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 131 + 7);
  const uint32_t whole = crc32c(bytes.data(), bytes.size());
  for (size_t cut : {size_t{0}, size_t{1}, size_t{4095}, 3 * kCrc32cBlock + 1, bytes.size()}) {
    CAPTURE(cut);
    CHECK(crc32c(bytes.data() + cut, bytes.size() - cut, crc32c(bytes.data(), cut)) == whole);
  }
}

TEST_CASE("kernels/crc32c: the block shift appends kCrc32cBlock zero bytes to a raw state") {
  const std::vector<uint8_t> zeros(kCrc32cBlock, 0);
  for (uint32_t state : {1u, 0x80000000u, 0xDEADBEEFu, 0xFFFFFFFFu}) {
    CAPTURE(state);
    CHECK(crc32c_shift_block(state) == portable_raw(state, zeros.data(), zeros.size()));
  }
  CHECK(crc32c_shift_block(0) == 0u);
}

}  // namespace
}  // namespace edgemt::kernels
