// The AVX2 + FMA3 zero-skipping f32 GEMM against the fma reference, bit for
// bit (the portable kernel: ../f32_gemm_sparse_test.cc); skipped on CPUs
// without AVX2 and FMA3.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/f32_gemm_sparse.h"
#include "support/f32_gemm_reference.h"

namespace edgemt::kernels::f32 {
namespace {

TEST_CASE("kernels/f32_gemm_sparse_avx2: equals the fma reference bit for bit" *
          doctest::skip(!(cpu_features().avx2 && cpu_features().fma))) {
  testing::check_sparse_f32_gemm_kernel(sparse_gemm_avx2);
}

}  // namespace
}  // namespace edgemt::kernels::f32
