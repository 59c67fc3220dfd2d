// The AVX2 packers of 16 whole rows against the packed layouts'
// definitions (support/pack_testing.h says what is checked). pack_weights
// through the kernel the CPU picks: ../f32_gemm_test.cc (unpack_row) and
// ../int8_gemm_test.cc. Skipped on CPUs without AVX2.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/f32_gemm.h"
#include "kernels/int8_gemm_variants.h"
#include "support/pack_testing.h"

namespace edgemt::kernels {
namespace {

TEST_CASE("kernels/pack_avx2: f32, the packed layout, bit for bit" *
          doctest::skip(!cpu_features().avx2)) {
  testing::check_f32_pack(f32::pack_rows_block_avx2, 73);
}

TEST_CASE("kernels/pack_avx2: int8 groups byte for byte, their sums and least bytes" *
          doctest::skip(!cpu_features().avx2)) {
  testing::check_int8_group_pack(int8::pack_groups_avx2, 76);
}

}  // namespace
}  // namespace edgemt::kernels
