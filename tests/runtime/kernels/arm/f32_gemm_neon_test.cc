// The NEON f32 GEMM against the fma reference, bit for bit (the portable
// kernel: ../f32_gemm_test.cc); skipped on CPUs without NEON.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/f32_gemm.h"
#include "support/f32_gemm_reference.h"

namespace edgemt::kernels::f32 {
namespace {

TEST_CASE("kernels/f32/gemm_neon: equals the fma reference bit for bit" * doctest::skip(!cpu_features().neon)) {
  testing::check_f32_gemm_kernel(gemm_neon);
}

}  // namespace
}  // namespace edgemt::kernels::f32
