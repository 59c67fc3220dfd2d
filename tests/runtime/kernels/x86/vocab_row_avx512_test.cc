// The AVX-512 vocabulary-row passes give the portable ones' bits (the
// portable ones are checked against naive references in
// ../vocab_row_test.cc); skipped on CPUs without AVX-512.
#include <doctest/doctest.h>

#include "core/cpu_features.h"
#include "kernels/vocab_row.h"
#include "support/vocab_row_cases.h"

namespace edgemt::kernels {
namespace {

TEST_CASE("kernels/vocab_row_avx512: the portable passes' bits, exp over every float exponent" *
          doctest::skip(!cpu_features().avx512)) {
  VocabRowKernels variant;
  variant.normalize = normalize_row_avx512;
  variant.argmax = argmax_avx512;
  variant.first_above = first_above_avx512;
  testing::check_same_bits_as_portable(variant);
}

}  // namespace
}  // namespace edgemt::kernels
