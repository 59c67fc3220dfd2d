// The AVX2 + FMA3 f32 GEMM against the fma reference, bit for bit (the
// portable kernel: ../f32_gemm_test.cc); skipped on CPUs without AVX2 and FMA3.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/f32_gemm.h"
#include "support/f32_gemm_reference.h"

namespace edgemt::kernels::f32 {
namespace {

TEST_CASE("kernels/f32/gemm_avx2: equals the fma reference bit for bit" * doctest::skip(!(cpu_features().avx2 && cpu_features().fma))) {
  testing::check_f32_gemm_kernel(gemm_avx2);
}

}  // namespace
}  // namespace edgemt::kernels::f32
