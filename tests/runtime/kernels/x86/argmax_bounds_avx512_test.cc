// The AVX-512 pass 1 of the arg-max shortcut gives the portable pass's bits
// (argmax_bounds_cases.h: every length 0-70 around the sixteen lanes);
// skipped on CPUs without AVX-512.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/argmax_bounds.h"
#include "support/argmax_bounds_cases.h"

namespace edgemt::kernels {
namespace {

TEST_CASE("kernels/argmax_bounds_avx512: the portable pass's bits" * doctest::skip(!cpu_features().avx512)) {
  bounds_testing::check_portable_bits(argmax_upper_bounds_avx512, 54, 70);
}

}  // namespace
}  // namespace edgemt::kernels
