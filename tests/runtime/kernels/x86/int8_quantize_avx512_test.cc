// The activation quantizer's AVX-512 parts against the portable quantizer
// (quantize_rows, quantize_tensor, quantize_fixed), bit for bit: depths
// around 16, with and without a multiplier, full and narrow codes. The
// variants' own quantizers are checked in ../int8_gemm_test.cc; skipped on
// CPUs without AVX-512.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/int8_gemm_variants.h"
#include "support/kernel_testing.h"

namespace edgemt::kernels::int8 {
namespace {

TEST_CASE("kernels/int8_quantize_avx512: the portable quantizer's codes and scales" *
          doctest::skip(!cpu_features().avx512)) {
  testing::Random rng(61);
  constexpr size_t kRows = 5;
  for (size_t depth : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{33}, size_t{256}}) {
    const std::vector<float> x = rng.normal_vector(kRows * depth, 0.0f, 3.0f);
    const std::vector<float> multiplier = rng.normal_vector(depth, 1.0f, 0.5f);
    for (const float* m : {static_cast<const float*>(nullptr), multiplier.data()}) {
      for (int32_t limit : {kFullCodes, kNarrowCodes}) {
        CAPTURE(depth);
        CAPTURE(limit);
        CAPTURE(m != nullptr);
        const size_t bytes = kRows * padded_depth(depth);
        std::vector<int8_t> want(bytes, 99), got(bytes, 99);
        std::vector<float> want_scale(kRows), got_scale(kRows);
        // Codes and scales of one portable quantizer against its AVX-512 parts.
        auto same_as_portable = [&](const char* quantizer) {
          CAPTURE(quantizer);
          CHECK(got == want);
          CHECK(testing::same_bits(got_scale.data(), want_scale.data(), kRows));
        };
        quantize_rows(x.data(), kRows, depth, depth, limit, m, want.data(), want_scale.data());
        quantize_with<row_max_bits_avx512, quantize_row_avx512, false>(
            x.data(), kRows, depth, depth, limit, m, got.data(), got_scale.data());
        same_as_portable("quantize_rows");
        quantize_tensor(x.data(), kRows, depth, depth, limit, m, want.data(), want_scale.data());
        quantize_with<row_max_bits_avx512, quantize_row_avx512, true>(
            x.data(), kRows, depth, depth, limit, m, got.data(), got_scale.data());
        same_as_portable("quantize_tensor");
        quantize_fixed(x.data(), kRows, depth, depth, limit, m, 30.0f, want.data(), want_scale.data());
        quantize_fixed_with<row_max_bits_avx512, quantize_row_avx512>(
            x.data(), kRows, depth, depth, limit, m, 30.0f, got.data(), got_scale.data());
        same_as_portable("quantize_fixed");
      }
    }
  }
}

}  // namespace
}  // namespace edgemt::kernels::int8
