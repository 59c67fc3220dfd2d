// The AVX2 attention gives the portable kernel's bits (the portable one
// is checked against a double-precision reference in ../attention_test.cc)
// over the layouts of support/attention_cases.h; skipped on CPUs without
// AVX2.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/attention.h"
#include "support/attention_cases.h"

namespace edgemt::kernels {
namespace {

TEST_CASE("kernels/attention_avx2: the portable kernel's bits" * doctest::skip(!cpu_features().avx2)) {
  testing::check_same_bits_as_portable(scaled_dot_product_attention_avx2);
}

}  // namespace
}  // namespace edgemt::kernels
