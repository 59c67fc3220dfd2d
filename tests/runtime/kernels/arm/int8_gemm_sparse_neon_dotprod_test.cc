// The NEON dot-product zero-skipping int8 GEMM against the exact integer
// reference (the portable kernel: ../int8_gemm_sparse_test.cc); skipped on
// CPUs without the dot product.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/int8_gemm_sparse.h"
#include "support/int8_reference.h"

namespace edgemt::kernels::int8 {
namespace {

TEST_CASE("kernels/int8_gemm_sparse_neon_dotprod: equals the exact integer reference" *
          doctest::skip(!cpu_features().neon_dotprod)) {
  testing::check_sparse_gemm_kernel(sparse_gemm_neon_dotprod, "sparse_gemm_neon_dotprod");
}

}  // namespace
}  // namespace edgemt::kernels::int8
