// The zero-skipping int8 GEMM: the portable kernel against the exact
// integer reference, bit for bit, the kernel chosen beside each dense one,
// and the count that decides when it runs. The x86 kernels:
// x86/int8_gemm_sparse_*_test.cc.
#include "kernels/int8_gemm_sparse.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "kernels/int8_gemm_variants.h"
#include "support/int8_reference.h"

namespace edgemt::kernels::int8 {
namespace {

TEST_CASE("kernels/int8_gemm_sparse: portable kernel equals the exact integer reference") {
  testing::check_sparse_gemm_kernel(gemm_portable, "portable");
}

TEST_CASE("kernels/int8_gemm_sparse: the kernel beside each dense one") {
  CHECK((sparse_gemm_kernel(gemm_portable) == gemm_portable));
#if defined(__x86_64__)
  CHECK((sparse_gemm_kernel(gemm_avx512_vnni) == sparse_gemm_avx512_vnni));
  CHECK((sparse_gemm_kernel(gemm_avx512bw) == sparse_gemm_avx512bw));
  for (GemmKernel dense : {gemm_avx2, gemm_avx2_vpsignb, gemm_avx_vnni}) {
    CHECK((sparse_gemm_kernel(dense) == sparse_gemm_avx2));
  }
#elif defined(__aarch64__)
  CHECK((sparse_gemm_kernel(gemm_neon_dotprod) == sparse_gemm_neon_dotprod));
  CHECK((sparse_gemm_kernel(gemm_neon) == nullptr));
#endif
  CHECK((sparse_gemm_kernel(nullptr) == nullptr));
}

TEST_CASE("kernels/int8_gemm_sparse: count_nonzero_groups counts groups of 4, stops past its limit") {
  // 2 rows of 3 groups in a stride of 16 bytes: the 4th group of each row
  // is past `groups` and not counted.
  std::vector<int8_t> xq(32, 0);
  xq[1] = 5;    // row 0, group 0
  xq[11] = -1;  // row 0, group 2
  xq[13] = 7;   // row 0, group 3: not counted
  xq[16 + 4] = 1;  // row 1, group 1
  CHECK(count_nonzero_groups(xq.data(), 2, 16, 3, 100) == 3);
  CHECK(count_nonzero_groups(xq.data(), 1, 16, 3, 100) == 2);
  CHECK(count_nonzero_groups(xq.data(), 2, 16, 3, 2) == 3);  // limit + 1
  CHECK(count_nonzero_groups(xq.data(), 2, 16, 3, 1) == 2);  // after the first row
  CHECK(count_nonzero_groups(xq.data(), 0, 16, 3, 0) == 0);
}

}  // namespace
}  // namespace edgemt::kernels::int8
