// The AVX-512 BW zero-skipping int8 GEMM against the exact integer
// reference (the portable kernel: ../int8_gemm_sparse_test.cc); skipped on
// CPUs without AVX-512 BW.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/int8_gemm_sparse.h"
#include "support/int8_reference.h"

namespace edgemt::kernels::int8 {
namespace {

TEST_CASE("kernels/int8_gemm_sparse_avx512bw: equals the exact integer reference" *
          doctest::skip(!cpu_features().avx512)) {
  testing::check_sparse_gemm_kernel(sparse_gemm_avx512bw, "sparse_gemm_avx512bw");
}

}  // namespace
}  // namespace edgemt::kernels::int8
