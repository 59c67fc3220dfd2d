// The SSE4.2 CRC-32C (three interleaved chains) against the bitwise
// reference on every short length and alignment and around its block
// boundaries; skipped on CPUs without SSE4.2.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/crc32c.h"
#include "support/crc32c_cases.h"

namespace edgemt::kernels {
namespace {

TEST_CASE("kernels/crc32c_sse42: equals the bitwise reference" * doctest::skip(!cpu_features().sse42)) {
  testing::check_raw_crc32c_kernel(crc32c_raw_sse42);
}

}  // namespace
}  // namespace edgemt::kernels
