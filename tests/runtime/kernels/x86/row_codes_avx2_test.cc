// The AVX2 row kernels of the arg-max shortcut give the portable ones'
// bits (those are checked against their definition in ../row_codes_test.cc):
// every depth 0-70 around the 16 lanes and a few long rows, signed zeros,
// a NaN or an infinity in the row; skipped on CPUs without AVX2.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/row_codes.h"
#include "support/row_codes_testing.h"

namespace edgemt::kernels {
namespace {

TEST_CASE("kernels/row_codes_avx2: the portable kernels' bits" * doctest::skip(!cpu_features().avx2)) {
  testing::check_same_row_codes(row_magnitudes_avx2, quantize_row_avx2, row_magnitudes_portable,
                                quantize_row_portable, 65);
}

}  // namespace
}  // namespace edgemt::kernels
