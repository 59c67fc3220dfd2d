// The zero-skipping f32 GEMM: the portable kernel against the fma reference
// (which multiplies every zero) bit for bit, the kernel chosen beside the
// dense one, and the two scans that decide when it runs. The x86 kernels:
// x86/f32_gemm_sparse_*_test.cc.
#include "kernels/f32_gemm_sparse.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "support/f32_gemm_reference.h"

namespace edgemt::kernels::f32 {
namespace {

TEST_CASE("kernels/f32_gemm_sparse: portable kernel equals the fma reference bit for bit") {
  testing::check_sparse_f32_gemm_kernel(sparse_gemm_portable);
}

TEST_CASE("kernels/f32_gemm_sparse: the kernel matches the dense one chosen") {
  const GemmKernel dense = fast_gemm_kernel();
  const GemmKernel sparse = sparse_gemm_kernel();
#if defined(__x86_64__)
  if (dense == gemm_avx512) CHECK((sparse == sparse_gemm_avx512));
  if (dense == gemm_avx2) CHECK((sparse == sparse_gemm_avx2));
#endif
  if (dense == gemm_portable) CHECK((sparse == sparse_gemm_portable));
  if (dense == nullptr) CHECK((sparse == nullptr));
}

TEST_CASE("kernels/f32_gemm_sparse: count_nonzeros counts NaN, not -0, and stops past its limit") {
  // 2 rows of depth 5 in a stride of 7: the 2 floats past each row's depth
  // are not counted.
  const std::vector<float> x = {0.0f, 1.0f, -0.0f, NAN, 0.0f, 9.0f, 9.0f,
                                -2.0f, 0.0f, 0.0f, 0.0f, INFINITY, 9.0f, 9.0f};
  CHECK(count_nonzeros(x.data(), 2, 7, 5, 100) == 4);
  CHECK(count_nonzeros(x.data(), 1, 7, 5, 100) == 2);
  CHECK(count_nonzeros(x.data(), 2, 7, 5, 4) == 4);
  CHECK(count_nonzeros(x.data(), 2, 7, 5, 3) == 4);  // limit + 1
  CHECK(count_nonzeros(x.data(), 2, 7, 5, 1) == 2);  // after the first row
  CHECK(count_nonzeros(x.data(), 0, 7, 5, 0) == 0);
  // Rows of 19: two runs of 8 and 3 more, NaN, inf and -0 in each part.
  std::vector<float> long_rows(2 * 19, 0.0f);
  for (size_t i : {0, 5, 9, 17, 19 + 7, 19 + 8, 19 + 15, 19 + 18}) long_rows[i] = 1.5f;
  long_rows[3] = NAN;
  long_rows[12] = -INFINITY;
  long_rows[19 + 2] = -0.0f;
  long_rows[19 + 16] = NAN;
  CHECK(count_nonzeros(long_rows.data(), 1, 19, 19, 100) == 6);
  CHECK(count_nonzeros(long_rows.data(), 2, 19, 19, 100) == 11);
  CHECK(count_nonzeros(long_rows.data(), 2, 19, 18, 100) == 10);  // not the rows' last values
}

TEST_CASE("kernels/f32_gemm_sparse: has_non_finite_values finds inf and NaN only") {
  std::vector<float> v = {0.0f, -0.0f, 1e38f, -1e-45f, 3.0f};
  CHECK(!has_non_finite_values(v.data(), v.size()));
  for (float bad : {INFINITY, -INFINITY, NAN}) {
    std::vector<float> with = v;
    with.back() = bad;
    CHECK(has_non_finite_values(with.data(), with.size()));
    CHECK(!has_non_finite_values(with.data(), with.size() - 1));
  }
}

}  // namespace
}  // namespace edgemt::kernels::f32
