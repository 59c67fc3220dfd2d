// The ARMv8 CRC-32C (three interleaved chains) against the bitwise
// reference on every short length and alignment and around its block
// boundaries; skipped on CPUs without the CRC32 instructions.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/crc32c.h"
#include "support/crc32c_cases.h"

namespace edgemt::kernels {
namespace {

TEST_CASE("kernels/crc32c_armv8: equals the bitwise reference" * doctest::skip(!cpu_features().crc32)) {
  testing::check_raw_crc32c_kernel(crc32c_raw_armv8);
}

}  // namespace
}  // namespace edgemt::kernels
