// The AVX2 int8 GEMM (vpmaddubsw: offset codes when narrow, the sign trick when full) against the exact integer reference (tests/support/int8_reference.h);
// skipped on CPUs without AVX2.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/int8_gemm_variants.h"
#include "support/int8_reference.h"

namespace edgemt::kernels::int8 {
namespace {

TEST_CASE("kernels/int8/gemm_avx2: equals the exact integer reference" * doctest::skip(!cpu_features().avx2)) {
  testing::check_gemm_kernel_against_reference(gemm_avx2, "gemm_avx2", kFullCodes);
  testing::check_gemm_kernel_against_reference(gemm_avx2, "gemm_avx2", kNarrowCodes);
}

}  // namespace
}  // namespace edgemt::kernels::int8
