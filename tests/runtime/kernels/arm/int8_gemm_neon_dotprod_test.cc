// The NEON dot-product int8 GEMM (sdot) against the exact integer reference (tests/support/int8_reference.h);
// skipped on CPUs without the dot product.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/int8_gemm_variants.h"
#include "support/int8_reference.h"

namespace edgemt::kernels::int8 {
namespace {

TEST_CASE("kernels/int8/gemm_neon_dotprod: equals the exact integer reference" * doctest::skip(!cpu_features().neon_dotprod)) {
  testing::check_gemm_kernel_against_reference(gemm_neon_dotprod, "gemm_neon_dotprod", kFullCodes);
  testing::check_gemm_kernel_against_reference(gemm_neon_dotprod, "gemm_neon_dotprod", kNarrowCodes);
}

}  // namespace
}  // namespace edgemt::kernels::int8
