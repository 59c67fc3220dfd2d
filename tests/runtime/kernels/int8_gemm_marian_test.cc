// Marian's saturating int8 sums (kernels/int8_gemm_marian.h): the portable
// kernel against the naive register-step reference, and the kernel chosen
// for this CPU.
#include "kernels/int8_gemm_marian.h"

#include <doctest/doctest.h>

#include "support/int8_marian_reference.h"

namespace edgemt::kernels::int8 {
namespace {

TEST_CASE("kernels/int8_marian: the portable kernel gives the register-step reference's bits") {
  testing::check_marian_kernel(gemm_marian_portable, "portable");
}

TEST_CASE("kernels/int8_marian: the kernel chosen for this CPU passes the same check") {
  testing::check_marian_kernel(marian_gemm_kernel(), "chosen");
}

}  // namespace
}  // namespace edgemt::kernels::int8
