#include "kernels/fp16.h"

#include "kernels/portable_math.h"

// Integer-only conversions: the result does not depend on the FPU mode
// (flush-to-zero, rounding) or on F16C/FCVT being present, so x86 and ARM
// agree bit for bit. NaN payloads are kept (f16 -> f32 -> f16 is the
// identity on all 65536 values); unlike F16C and ARM FCVT, signalling NaNs are
// not quietened.

namespace edgemt::kernels {

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1Fu) return math::bits_float(sign | 0x7F800000u | (mant << 13));  // inf, NaN
  if (exp != 0) return math::bits_float(sign | ((exp + (127 - 15)) << 23) | (mant << 13));
  if (mant == 0) return math::bits_float(sign);  // +-0
  // Subnormal mant·2^-24: shift the leading 1 up to the implicit-bit
  // position, lowering the exponent once per shift.
  uint32_t e = 127 - 15 + 1;
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return math::bits_float(sign | (e << 23) | ((mant & 0x3FFu) << 13));
}

uint16_t f32_to_f16(float f) {
  uint32_t x = math::float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7FFFFFFFu;
  if (x >= 0x7F800000u) {  // inf or NaN
    if (x == 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00u);
    uint32_t mant = (x >> 13) & 0x3FFu;
    if (mant == 0) mant = 0x200u;  // payload only in dropped bits: stay a NaN
    return static_cast<uint16_t>(sign | 0x7C00u | mant);
  }
  // 65520 = 0x477FF000 is halfway between 65504 (max f16) and 2^16; ties to
  // even round up, so everything from there on is inf.
  if (x >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
  if (x >= 0x38800000u) {  // >= 2^-14: normal f16
    // Round to nearest even on the 13 dropped bits; a carry out of the
    // mantissa correctly bumps the exponent.
    x += 0x0FFFu + ((x >> 13) & 1u);
    x -= (127u - 15u) << 23;
    return static_cast<uint16_t>(sign | (x >> 13));
  }
  // Subnormal f16 (or zero): value / 2^-24 = m24 · 2^(e - 126) with the
  // implicit bit in m24; below 2^-25 (e < 102) everything rounds to 0.
  const uint32_t e = x >> 23;
  if (e < 102) return sign;
  const uint32_t m24 = (x & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126 - e;  // 14..24
  uint32_t r = m24 >> shift;
  const uint32_t rem = m24 & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (r & 1u))) ++r;  // may reach 0x400: smallest normal
  return static_cast<uint16_t>(sign | r);
}

// Same results as f16_to_f32, branch-free so the loop vectorizes (it widens
// every f16 matrix at load). Normals, inf and NaN are a re-biased shift;
// subnormals are em·2^-24, which int->float conversion and a power-of-two
// multiply give exactly (the result is a normal f32, so FTZ/DAZ modes and the
// rounding mode cannot change it).
void f16_to_f32_array(const uint16_t* __restrict src, float* __restrict dst, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t h = src[i];
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t em = h & 0x7FFFu;
    // All-ones masks instead of ?: so GCC sees no control flow and vectorizes.
    const uint32_t inf_nan = 0u - static_cast<uint32_t>(em >= 0x7C00u);
    const uint32_t subnormal = 0u - static_cast<uint32_t>(em < 0x400u);
    uint32_t bits = (em << 13) + ((127u - 15u) << 23);
    bits += inf_nan & ((128u - 16u) << 23);  // inf/NaN: exponent to 0xFF
    const uint32_t small =
        math::float_bits(static_cast<float>(static_cast<int32_t>(em)) * 0x1p-24f);
    bits = (small & subnormal) | (bits & ~subnormal);
    dst[i] = math::bits_float(sign | bits);
  }
}

}  // namespace edgemt::kernels
