// Helpers for the kernel tests: deterministic random data and float bits.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace edgemt::testing {

// Fixed seed per test: failures reproduce exactly.
class Random {
 public:
  explicit Random(uint32_t seed) : engine_(seed) {}
  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(engine_); }
  float normal(float mean, float stddev) {
    return std::normal_distribution<float>(mean, stddev)(engine_);
  }
  size_t index(size_t lo, size_t hi) {  // inclusive
    return std::uniform_int_distribution<size_t>(lo, hi)(engine_);
  }
  uint32_t bits() { return static_cast<uint32_t>(engine_()); }
  std::vector<float> normal_vector(size_t n, float mean, float stddev) {
    std::vector<float> v(n);
    for (float& x : v) x = normal(mean, stddev);
    return v;
  }

 private:
  std::mt19937 engine_;
};

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Bitwise equality of two float arrays (NaN == NaN with the same bits).
inline bool same_bits(const float* a, const float* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

// The same, except that any NaN equals any NaN: for a scalar reference loop
// whose NaN payload depends on which operand of a commutative operation the
// compiler puts first (x86 keeps the first NaN; GCC and clang order them
// differently), e.g. two NaNs of different signs added.
inline bool same_bits_any_nan(const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const bool both_nan = std::isnan(a[i]) && std::isnan(b[i]);
    if (!both_nan && std::memcmp(a + i, b + i, sizeof(float)) != 0) return false;
  }
  return true;
}

// Row lengths for a vector kernel against its reference: every length
// 0-70 (around 16- and 8-lane boundaries and their tails) and a few long
// rows.
inline std::vector<size_t> lane_test_lengths() {
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 70; ++n) lengths.push_back(n);
  for (size_t n : {256, 512, 1000}) lengths.push_back(n);
  return lengths;
}

// 64-byte-aligned storage for a kernel's pack (the kernels load packed
// blocks aligned).
struct PackStorage {
  explicit PackStorage(size_t bytes) : bytes_(bytes + 64) {}
  void* aligned() {
    return bytes_.data() + (64 - reinterpret_cast<uintptr_t>(bytes_.data()) % 64) % 64;
  }
  std::vector<uint8_t> bytes_;
};

}  // namespace edgemt::testing
