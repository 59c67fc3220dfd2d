// The AVX-512 VNNI int8 GEMM (vpdpbusd, u8 offset) against the exact integer reference (tests/support/int8_reference.h);
// skipped on CPUs without AVX-512 VNNI.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/int8_gemm_variants.h"
#include "support/int8_reference.h"

namespace edgemt::kernels::int8 {
namespace {

TEST_CASE("kernels/int8/gemm_avx512_vnni: equals the exact integer reference" * doctest::skip(!cpu_features().avx512_vnni)) {
  testing::check_gemm_kernel_against_reference(gemm_avx512_vnni, "gemm_avx512_vnni", kFullCodes);
  testing::check_gemm_kernel_against_reference(gemm_avx512_vnni, "gemm_avx512_vnni", kNarrowCodes);
}

}  // namespace
}  // namespace edgemt::kernels::int8
