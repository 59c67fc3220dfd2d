// The baseline NEON int8 GEMM (smull, sadalp) against the exact integer reference (tests/support/int8_reference.h);
// skipped on CPUs without NEON.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/int8_gemm_variants.h"
#include "support/int8_reference.h"

namespace edgemt::kernels::int8 {
namespace {

TEST_CASE("kernels/int8/gemm_neon: equals the exact integer reference" * doctest::skip(!cpu_features().neon)) {
  testing::check_gemm_kernel_against_reference(gemm_neon, "gemm_neon", kFullCodes);
  testing::check_gemm_kernel_against_reference(gemm_neon, "gemm_neon", kNarrowCodes);
}

}  // namespace
}  // namespace edgemt::kernels::int8
