// find_non_finite_f32/_f16 and find_int8_min against a naive scan, with the
// bad value planted at every kind of position (first, last, block edges,
// tails) and on unaligned data.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "format/weight_values.h"
#include "kernels/fp16.h"

namespace edgemt {
namespace {

constexpr size_t kCounts[] = {0, 1, 2, 15, 16, 17, 1023, 1024, 1025, 3000};

size_t naive_non_finite_f32(const std::vector<float>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) return i;
  }
  return v.size();
}

std::vector<size_t> positions(size_t n) {
  if (n == 0) return {};
  return {0, n / 2, n - 1, n > 1024 ? size_t{1023} : n - 1, n > 1024 ? size_t{1024} : 0};
}

TEST_CASE("format/weight_values: non-finite f32 found where a naive scan finds it") {
  for (size_t n : kCounts) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i)) * 3.0e38f;  // large but finite
    CHECK(find_non_finite_f32(v.data(), n) == n);
    for (size_t at : positions(n)) {
      for (float bad : {NAN, -NAN, INFINITY, -INFINITY}) {
        std::vector<float> w = v;
        w[at] = bad;
        if (at + 1 < n) w[n - 1] = bad;  // a later one must not win
        CAPTURE(n);
        CAPTURE(at);
        CHECK(find_non_finite_f32(w.data(), n) == naive_non_finite_f32(w));
        CHECK(find_non_finite_f32(w.data(), n) == at);
      }
    }
  }
}

TEST_CASE("format/weight_values: non-finite f16 (exponent all ones) and the f16 maximum") {
  for (size_t n : kCounts) {
    std::vector<uint16_t> v(n, kernels::f32_to_f16(65504.0f));  // the largest finite half
    CHECK(find_non_finite_f16(v.data(), n) == n);
    for (size_t at : positions(n)) {
      for (uint16_t bad : {uint16_t{0x7c00}, uint16_t{0xfc00}, uint16_t{0x7e00}, uint16_t{0x7c01}}) {
        std::vector<uint16_t> w = v;
        w[at] = bad;
        CAPTURE(n);
        CAPTURE(at);
        CHECK(find_non_finite_f16(w.data(), n) == at);
      }
    }
  }
}

TEST_CASE("format/weight_values: int8 -128 found, -127 and 127 accepted") {
  for (size_t n : kCounts) {
    std::vector<int8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<int8_t>(static_cast<int>(i % 255) - 127);
    CHECK(find_int8_min(v.data(), n) == n);
    for (size_t at : positions(n)) {
      std::vector<int8_t> w = v;
      w[at] = -128;
      CAPTURE(n);
      CAPTURE(at);
      CHECK(find_int8_min(w.data(), n) == at);
    }
  }
}

TEST_CASE("format/weight_values: data at an odd address") {
  std::vector<unsigned char> bytes(1 + 100 * sizeof(float));
  std::vector<float> v(100, 1.0f);
  v[77] = NAN;
  std::memcpy(bytes.data() + 1, v.data(), v.size() * sizeof(float));
  CHECK(find_non_finite_f32(bytes.data() + 1, v.size()) == 77);
}

}  // namespace
}  // namespace edgemt
