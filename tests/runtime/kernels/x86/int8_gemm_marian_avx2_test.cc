// The AVX2 kernel for Marian's saturating int8 sums against the naive
// register-step reference (support/int8_marian_reference.h); skipped on
// CPUs without AVX2.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/int8_gemm_marian.h"
#include "support/int8_marian_reference.h"

namespace edgemt::kernels::int8 {
namespace {

TEST_CASE("kernels/int8_marian_avx2: the register-step reference's bits" *
          doctest::skip(!cpu_features().avx2)) {
  testing::check_marian_kernel(gemm_marian_avx2, "avx2");
}

}  // namespace
}  // namespace edgemt::kernels::int8
