// The portable 4-lane vectors (kernels/portable_vectors.h) against scalar
// float32 arithmetic and the float bit patterns.
#include "kernels/portable_vectors.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

namespace edgemt::kernels {
namespace {

int32_t bits_of(float x) {
  int32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

TEST_CASE("kernels/portable_vectors: the bit constants are those of |x|'s mask, +inf and -inf") {
  CHECK(kInfBits == bits_of(INFINITY));
  CHECK(kNegInfBits == bits_of(-INFINITY));
  CHECK((bits_of(-2.5f) & kAbsMask) == bits_of(2.5f));
  CHECK((bits_of(NAN) & kAbsMask) > kInfBits);
  CHECK((bits_of(-NAN) & kAbsMask) > kInfBits);
  CHECK((bits_of(3.4e38f) & kAbsMask) < kInfBits);
}

TEST_CASE("kernels/portable_vectors: loads and stores keep every bit, unaligned") {
  // A signalling-NaN pattern, -0, a subnormal and a normal, from an odd offset.
  const int32_t patterns[5] = {0, static_cast<int32_t>(0x7FA00001u), static_cast<int32_t>(0x80000000u), 1,
                               bits_of(-1.25f)};
  float source[5];
  std::memcpy(source, patterns, sizeof(source));
  const Floats4 v = load_floats4(source + 1);
  const Ints4 b = load_bits4(source + 1);
  float out[5] = {7.0f, 7.0f, 7.0f, 7.0f, 7.0f};
  store_floats4(out + 1, v);
  CHECK(bits_of(out[0]) == bits_of(7.0f));
  for (int l = 0; l < 4; ++l) {
    CAPTURE(l);
    CHECK(b[l] == patterns[l + 1]);
    CHECK(bits_of(out[l + 1]) == patterns[l + 1]);
  }
}

TEST_CASE("kernels/portable_vectors: lane arithmetic, abs4 and comparisons match the scalar code") {
  const float a[4] = {1.5f, -0.0f, -3.0e38f, 1e-40f};
  const float c[4] = {0.1f, 2.0f, -3.0e38f, -7.0f};
  const Floats4 va = load_floats4(a), vc = load_floats4(c);
  const Floats4 sum = va * 1.0009765625f + vc, magnitude = abs4(va);
  const Ints4 greater = va > vc;
  for (int l = 0; l < 4; ++l) {
    CAPTURE(l);
    CHECK(bits_of(sum[l]) == bits_of(a[l] * 1.0009765625f + c[l]));
    CHECK(bits_of(magnitude[l]) == bits_of(std::fabs(a[l])));
    CHECK(greater[l] == (a[l] > c[l] ? -1 : 0));
  }
  // A NaN lane compares false, and abs4 keeps it a NaN.
  const float n[4] = {NAN, 1.0f, -NAN, 2.0f};
  const Floats4 vn = load_floats4(n);
  CHECK(std::isnan(abs4(vn)[0]));
  CHECK(std::isnan(abs4(vn)[2]));
  CHECK_FALSE(any_lane(vn > Floats4{} + 5.0f));
  CHECK_FALSE(any_lane((vn >= vn) & Ints4{1, 0, 1, 0}));
}

TEST_CASE("kernels/portable_vectors: any_lane is true exactly when a lane is non-zero") {
  CHECK_FALSE(any_lane(Ints4{0, 0, 0, 0}));
  for (int l = 0; l < 4; ++l) {
    Ints4 v = {0, 0, 0, 0};
    v[l] = 1;
    CAPTURE(l);
    CHECK(any_lane(v));
    v[l] = static_cast<int32_t>(0x80000000u);
    CHECK(any_lane(v));
  }
}

}  // namespace
}  // namespace edgemt::kernels
