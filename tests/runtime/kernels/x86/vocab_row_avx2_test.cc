// The AVX2 vocabulary-row passes give the portable ones' bits (the
// portable ones are checked against naive references in
// ../vocab_row_test.cc); skipped on CPUs without AVX2.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/vocab_row.h"
#include "support/vocab_row_cases.h"

namespace edgemt::kernels {
namespace {

TEST_CASE("kernels/vocab_row_avx2: the portable passes' bits, exp over every float exponent" *
          doctest::skip(!cpu_features().avx2)) {
  VocabRowKernels variant;
  variant.normalize = normalize_row_avx2;
  variant.argmax = argmax_avx2;
  variant.first_above = first_above_avx2;
  testing::check_same_bits_as_portable(variant);
}

}  // namespace
}  // namespace edgemt::kernels
