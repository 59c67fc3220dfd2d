// The AVX512 row kernels of the arg-max shortcut give the portable ones'
// bits (those are checked against their definition in ../row_codes_test.cc):
// every depth 0-70 around the 16 lanes and a few long rows, signed zeros,
// a NaN or an infinity in the row; skipped on CPUs without AVX512.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/row_codes.h"
#include "support/row_codes_testing.h"

namespace edgemt::kernels {
namespace {

TEST_CASE("kernels/row_codes_avx512: the portable kernels' bits" * doctest::skip(!cpu_features().avx512)) {
  testing::check_same_row_codes(row_magnitudes_avx512, quantize_row_avx512, row_magnitudes_portable,
                                quantize_row_portable, 64);
}

}  // namespace
}  // namespace edgemt::kernels
