// Four floats or four int32s in GCC's portable vector types: one SSE2
// register on x86-64, one NEON register on AArch64. Element-wise arithmetic
// and comparisons (a comparison gives -1 or 0 per lane, as Ints4) are
// written once for both architectures, for short loops that do not deserve
// a kernel per instruction set (the arg-max shortcut's bound pass, the
// finite test of a row's log-sum-exp). Lane arithmetic is IEEE float32 as
// the scalar code's, so a loop that does the same operations in the same
// order gives the same bits. Loads and stores go through memcpy: no
// alignment needed.
#pragma once

#include <cstdint>
#include <cstring>

namespace edgemt::kernels {

typedef float Floats4 __attribute__((vector_size(16)));
typedef int32_t Ints4 __attribute__((vector_size(16)));

// float32 bit patterns (as int32): the mask that clears the sign, +inf and
// -inf. On |x|'s bits, a value above kInfBits is a NaN.
inline constexpr int32_t kAbsMask = 0x7FFFFFFF;
inline constexpr int32_t kInfBits = 0x7F800000;
inline constexpr int32_t kNegInfBits = static_cast<int32_t>(0xFF800000u);

inline Floats4 load_floats4(const float* p) {
  Floats4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// The bit patterns of p[0..3].
inline Ints4 load_bits4(const float* p) {
  Ints4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void store_floats4(float* p, Floats4 v) { std::memcpy(p, &v, sizeof(v)); }

// |v| lane by lane (the sign bit cleared; a NaN stays a NaN).
inline Floats4 abs4(Floats4 v) {
  return reinterpret_cast<Floats4>(reinterpret_cast<Ints4>(v) & kAbsMask);
}

// Whether any lane of a comparison's result (or any mask) is non-zero.
inline bool any_lane(Ints4 v) { return (v[0] | v[1] | v[2] | v[3]) != 0; }

}  // namespace edgemt::kernels
