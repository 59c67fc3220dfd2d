// The AVX2 zero-skipping int8 GEMM against the exact integer reference (the
// portable kernel: ../int8_gemm_sparse_test.cc); skipped on CPUs without
// AVX2.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/int8_gemm_sparse.h"
#include "support/int8_reference.h"

namespace edgemt::kernels::int8 {
namespace {

TEST_CASE("kernels/int8_gemm_sparse_avx2: equals the exact integer reference" *
          doctest::skip(!cpu_features().avx2)) {
  testing::check_sparse_gemm_kernel(sparse_gemm_avx2, "sparse_gemm_avx2");
}

}  // namespace
}  // namespace edgemt::kernels::int8
