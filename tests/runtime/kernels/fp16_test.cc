// fp16 <-> fp32 conversion: exhaustive over f16, references built from the
// definition of binary16 (not from bit tricks).
#include "kernels/fp16.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <vector>

#include "support/kernel_testing.h"

namespace edgemt::kernels {
namespace {

using testing::bits_of;
using testing::float_of;

// Value of a finite f16 from its fields: (-1)^s · m·2^-24 (subnormal) or
// (-1)^s · (1024 + m)·2^(e - 25).
double f16_value(uint16_t h) {
  const int e = (h >> 10) & 0x1F;
  const int m = h & 0x3FF;
  const double magnitude = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

bool f16_is_nan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0; }

// Round-to-nearest-even reference: positive finite f16 values are increasing
// in their bit patterns 0x0000..0x7BFF; find the neighbours of |f| and
// compare with their midpoint (exact in double).
uint16_t reference_f32_to_f16(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (std::isnan(f)) return 0;  // not used for NaN
  const double v = std::fabs(static_cast<double>(f));
  if (v >= 65520.0) return sign | 0x7C00;  // at or past the midpoint 65504..65536: inf
  uint16_t lo = 0, hi = 0x7BFF;  // largest lo with value(lo) <= v
  while (lo < hi) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (f16_value(mid) <= v) lo = mid;
    else hi = static_cast<uint16_t>(mid - 1);
  }
  if (f16_value(lo) == v || lo == 0x7BFF) return sign | lo;
  const uint16_t up = static_cast<uint16_t>(lo + 1);
  const double midpoint = (f16_value(lo) + f16_value(up)) / 2.0;
  if (v < midpoint) return sign | lo;
  if (v > midpoint) return sign | up;
  return sign | ((lo & 1) ? up : lo);  // tie: even mantissa
}

TEST_CASE("kernels/fp16: f16 -> f32 is exact for all 65536 values") {
  int wrong = 0;
  uint32_t first_wrong = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<uint16_t>(i);
    const float f = f16_to_f32(h);
    bool ok;
    if (f16_is_nan(h)) {
      // NaN with the payload in the top mantissa bits and the sign kept.
      ok = std::isnan(f) && ((bits_of(f) >> 13) & 0x3FF) == (h & 0x3FFu) &&
           (bits_of(f) & 0x1FFF) == 0 && std::signbit(f) == ((h & 0x8000) != 0);
    } else if ((h & 0x7C00) == 0x7C00) {
      ok = std::isinf(f) && std::signbit(f) == ((h & 0x8000) != 0);
    } else {
      ok = static_cast<double>(f) == f16_value(h) && std::signbit(f) == ((h & 0x8000) != 0);
    }
    if (!ok && wrong++ == 0) first_wrong = i;
  }
  CAPTURE(first_wrong);
  CHECK(wrong == 0);
}

TEST_CASE("kernels/fp16: f16 -> f32 -> f16 round-trips all 65536 bit patterns") {
  int wrong = 0;
  uint32_t first_wrong = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<uint16_t>(i);
    if (f32_to_f16(f16_to_f32(h)) != h && wrong++ == 0) first_wrong = i;
  }
  CAPTURE(first_wrong);
  CHECK(wrong == 0);
}

TEST_CASE("kernels/fp16: f32 -> f16 rounds to nearest even (reference on midpoints and random)") {
  std::vector<float> inputs;
  // Every finite f16, the midpoint to its upper neighbour (ties) and one f32
  // ulp either side of that midpoint.
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    const double a = f16_value(static_cast<uint16_t>(h));
    const double b = f16_value(static_cast<uint16_t>(h + 1));
    const auto mid = static_cast<float>((a + b) / 2.0);  // exact: 12 significant bits
    inputs.push_back(static_cast<float>(a));
    inputs.push_back(mid);
    inputs.push_back(std::nextafter(mid, 0.0f));
    inputs.push_back(std::nextafter(mid, INFINITY));
  }
  // Boundaries: overflow, smallest subnormal, underflow to zero, f32 subnormals.
  for (float v : {65504.0f, 65519.996f, 65520.0f, 65536.0f, 1e10f, 3.4e38f, 5.9604645e-8f,
                  2.9802322e-8f, 2.9802326e-8f, 2.98023e-8f, 8.940697e-8f, 6.1035156e-5f,
                  6.1035153e-5f, 1e-40f, 1.4e-45f, 0.0f}) {
    inputs.push_back(v);
  }
  testing::Random rng(31);
  for (int i = 0; i < 2000000; ++i) {
    const float f = float_of(rng.bits());
    if (!std::isnan(f)) inputs.push_back(f);
  }
  for (int i = 0; i < 200000; ++i) inputs.push_back(rng.normal(0.0f, 1e-3f));  // weight-like

  int wrong = 0;
  float first_wrong = 0.0f;
  for (float f : inputs) {
    for (float s : {f, -f}) {
      if (f32_to_f16(s) != reference_f32_to_f16(s) && wrong++ == 0) first_wrong = s;
    }
  }
  CAPTURE(first_wrong);
  CHECK(wrong == 0);
}

TEST_CASE("kernels/fp16: special values") {
  CHECK(f32_to_f16(0.0f) == 0x0000);
  CHECK(f32_to_f16(-0.0f) == 0x8000);
  CHECK(f32_to_f16(INFINITY) == 0x7C00);
  CHECK(f32_to_f16(-INFINITY) == 0xFC00);
  CHECK(f32_to_f16(1.0f) == 0x3C00);
  CHECK(f32_to_f16(-2.0f) == 0xC000);
  CHECK(f32_to_f16(65504.0f) == 0x7BFF);
  CHECK(f32_to_f16(65520.0f) == 0x7C00);        // tie rounds to even: inf
  CHECK(f32_to_f16(5.9604645e-8f) == 0x0001);   // 2^-24, smallest subnormal
  CHECK(f32_to_f16(2.9802322e-8f) == 0x0000);   // 2^-25: tie to even 0
  CHECK(f32_to_f16(6.0975552e-5f) == 0x03FF);   // largest subnormal
  CHECK(f32_to_f16(6.1035156e-5f) == 0x0400);   // 2^-14, smallest normal
  CHECK(static_cast<double>(f16_to_f32(0x3555)) == 0.333251953125);
  // A NaN stays a NaN even when its payload is only in the dropped bits.
  const uint16_t low_payload_nan = f32_to_f16(float_of(0x7F800001u));
  CHECK((low_payload_nan & 0x7C00) == 0x7C00);
  CHECK((low_payload_nan & 0x3FF) != 0);
  CHECK(f32_to_f16(std::nanf("")) == 0x7E00);   // default quiet NaN
  CHECK(f32_to_f16(-std::nanf("")) == 0xFE00);
}

TEST_CASE("kernels/fp16: f16_to_f32_array equals the scalar conversion") {
  std::vector<uint16_t> src(65536 + 3);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i * 40503u);
  for (size_t n : {size_t{0}, size_t{1}, size_t{17}, size_t{255}, src.size()}) {
    std::vector<float> dst(n + 1, 7.0f);
    f16_to_f32_array(src.data(), dst.data(), n);
    bool same = true;
    for (size_t i = 0; i < n; ++i) same = same && bits_of(dst[i]) == bits_of(f16_to_f32(src[i]));
    CAPTURE(n);
    CHECK(same);
    CHECK(dst[n] == 7.0f);  // nothing past n written
  }
}

}  // namespace
}  // namespace edgemt::kernels
