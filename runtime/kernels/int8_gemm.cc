#include "kernels/int8_gemm.h"

#include <cstring>
#include <limits>

#include "core/cpu_features.h"
#include "kernels/int8_gemm_variants.h"
#include "kernels/portable_math.h"

namespace edgemt::kernels::int8 {
namespace {

// Offsets of the parts of a pack: blocks, then scale, bias, column_sum.
struct PackLayout {
  size_t block_count, groups, scale, bias, column_sum, total;
};

PackLayout pack_layout(size_t columns, size_t depth) {
  PackLayout l;
  l.block_count = (columns + kBlockColumns - 1) / kBlockColumns;
  l.groups = padded_depth(depth) / kGroupDepth;
  const size_t padded_columns = l.block_count * kBlockColumns;
  l.scale = round_up(l.block_count * l.groups * kGroupBytes, 64);
  l.bias = l.scale + round_up(padded_columns * sizeof(float), 64);
  l.column_sum = l.bias + round_up(padded_columns * sizeof(float), 64);
  l.total = l.column_sum + round_up(padded_columns * sizeof(int32_t), 64);
  return l;
}

// Round half to even for |v| < 2^22: adding 1.5·2^23 leaves no fraction bits,
// so the FPU's default rounding does it; plain float ops (no FMA contraction:
// -ffp-contract=off), the same on every CPU, and the loop vectorizes.
inline float round_half_even(float v) {
  constexpr float kMagic = 12582912.0f;  // 1.5 · 2^23
  return (v + kMagic) - kMagic;
}

}  // namespace

size_t packed_bytes(size_t columns, size_t depth) { return pack_layout(columns, depth).total; }

namespace {

// The parts of a pack being written.
struct PackTarget {
  PackLayout l;
  int8_t* blocks;
  float* scales;
  float* biases;
  int32_t* sums;
};

PackTarget pack_target(size_t columns, size_t depth, void* storage) {
  PackTarget t;
  t.l = pack_layout(columns, depth);
  uint8_t* base = static_cast<uint8_t*>(storage);
  t.blocks = reinterpret_cast<int8_t*>(base);
  t.scales = reinterpret_cast<float*>(base + t.l.scale);
  t.biases = reinterpret_cast<float*>(base + t.l.bias);
  t.sums = reinterpret_cast<int32_t*>(base + t.l.column_sum);
  return t;
}

// Packs block b from `rows`: its columns' rows of wq ([width, depth]
// row-major, width = the block's columns < N). False on a -128.
bool pack_block(const PackTarget& t, size_t b, const int8_t* rows, size_t width,
                const float* scale, const float* bias, size_t depth) {
  // Each (column, group) is the row's 4 bytes at depth 4g, so whole groups
  // move as 32-bit words; the last partial group and the padding columns
  // are zero. 16 whole rows' whole groups: transposed in registers, which
  // also sum them and find their least byte.
  const size_t full_groups = depth / kGroupDepth;
  size_t first = 0;  // groups [0, first) are written, summed and checked
  int32_t sums[kBlockColumns] = {};
  int8_t lows[kBlockColumns] = {};
#if defined(__x86_64__)
  const CpuFeatures& cpu = cpu_features();
  if (width == kBlockColumns && (cpu.avx512 || cpu.avx2)) {
    int8_t* out = t.blocks + b * t.l.groups * kGroupBytes;
    if (cpu.avx512) {
      pack_groups_avx512(rows, depth, full_groups, out, sums, lows);
    } else {
      pack_groups_avx2(rows, depth, full_groups, out, sums, lows);
    }
    first = full_groups;
  }
#endif
  // Per column: the -128 check and Σ_k over the rest, scale and bias.
  for (size_t c = 0; c < kBlockColumns; ++c) {
    const size_t n = b * kBlockColumns + c;
    int32_t sum = sums[c];
    int32_t low = lows[c];
    if (c < width) {
      const int8_t* row = rows + c * depth;
      for (size_t k = first * kGroupDepth; k < depth; ++k) {
        sum += row[k];
        low = row[k] < low ? row[k] : low;
      }
    }
    if (low == std::numeric_limits<int8_t>::min()) return false;
    t.sums[n] = sum;
    t.scales[n] = c < width ? scale[n] : 0.0f;
    t.biases[n] = c < width && bias != nullptr ? bias[n] : 0.0f;
  }
  for (size_t g = first; g < t.l.groups; ++g) {
    int8_t* group = t.blocks + (b * t.l.groups + g) * kGroupBytes;
    for (size_t c = 0; c < kBlockColumns; ++c) {
      int8_t* lane = group + c * kGroupDepth;
      if (c >= width) {
        std::memset(lane, 0, kGroupDepth);
      } else if (g < full_groups) {
        std::memcpy(lane, rows + c * depth + g * kGroupDepth, kGroupDepth);
      } else {
        for (size_t j = 0; j < kGroupDepth; ++j) {
          const size_t k = g * kGroupDepth + j;
          lane[j] = k < depth ? rows[c * depth + k] : 0;
        }
      }
    }
  }
  return true;
}

void describe(const PackTarget& t, size_t columns, size_t depth, PackedWeights* out) {
  out->blocks = t.blocks;
  out->scale = t.scales;
  out->bias = t.biases;
  out->column_sum = t.sums;
  out->columns = columns;
  out->depth = depth;
  out->groups = t.l.groups;
  out->block_count = t.l.block_count;
}

size_t block_width(size_t columns, size_t b) {
  const size_t first = b * kBlockColumns;
  return columns - first < kBlockColumns ? columns - first : kBlockColumns;
}

}  // namespace

bool pack_weights(const int8_t* wq, const float* scale, const float* bias, size_t columns,
                  size_t depth, void* storage, PackedWeights* out) {
  const PackTarget t = pack_target(columns, depth, storage);
  for (size_t b = 0; b < t.l.block_count; ++b) {
    if (!pack_block(t, b, wq + b * kBlockColumns * depth, block_width(columns, b), scale, bias,
                    depth)) {
      return false;
    }
  }
  describe(t, columns, depth, out);
  return true;
}

bool pack_weights_from(RowSource source, void* context, float* scale, const float* bias,
                       size_t columns, size_t depth, int8_t* rows, void* storage,
                       PackedWeights* out) {
  const PackTarget t = pack_target(columns, depth, storage);
  for (size_t b = 0; b < t.l.block_count; ++b) {
    const size_t width = block_width(columns, b);
    source(context, b * kBlockColumns, width, rows, scale + b * kBlockColumns);
    if (!pack_block(t, b, rows, width, scale, bias, depth)) return false;
  }
  describe(t, columns, depth, out);
  return true;
}

namespace {

// One block's codes from one layout to the other (pack_codes_to_rows),
// through `scratch`: column c's group g is 4 bytes at g·64 + c·4 in the
// pack and at c·groups·4 + g·4 as rows.
void move_block_codes(int8_t* block, size_t groups, int8_t* scratch, bool to_rows) {
  const size_t row_bytes = groups * kGroupDepth;
  std::memcpy(scratch, block, groups * kGroupBytes);
  for (size_t c = 0; c < kBlockColumns; ++c) {
    for (size_t g = 0; g < groups; ++g) {
      const size_t in_rows = c * row_bytes + g * kGroupDepth;
      const size_t in_pack = g * kGroupBytes + c * kGroupDepth;
      std::memcpy(block + (to_rows ? in_rows : in_pack), scratch + (to_rows ? in_pack : in_rows),
                  kGroupDepth);
    }
  }
}

}  // namespace

void pack_codes_to_rows(int8_t* codes, size_t block_count, size_t groups, int8_t* scratch) {
  for (size_t b = 0; b < block_count; ++b) {
    move_block_codes(codes + b * groups * kGroupBytes, groups, scratch, /*to_rows=*/true);
  }
}

void rows_to_pack_codes(int8_t* codes, size_t block_count, size_t groups, int8_t* scratch) {
  for (size_t b = 0; b < block_count; ++b) {
    move_block_codes(codes + b * groups * kGroupBytes, groups, scratch, /*to_rows=*/false);
  }
}

namespace {

// The value quantized: x[k], or x[k] · multiplier[k] rounded to float32 once.
template <bool kScaled>
inline float scaled_value(const float* __restrict row, const float* __restrict multiplier,
                          size_t k) {
  return kScaled ? row[k] * multiplier[k] : row[k];
}

// max|value| of a row as bit patterns: for non-negative floats they order
// like the values, and an integer max reduction vectorizes (a float one
// does not without -ffast-math). inf/NaN patterns are the largest.
template <bool kScaled>
uint32_t row_max_bits(const float* __restrict row, size_t depth, const float* __restrict multiplier) {
  uint32_t max_bits = 0;
  for (size_t k = 0; k < depth; ++k) {
    const uint32_t bits = math::float_bits(scaled_value<kScaled>(row, multiplier, k)) & 0x7FFFFFFFu;
    max_bits = bits > max_bits ? bits : max_bits;
  }
  return max_bits;
}

// One row's codes q [padded_depth(depth)] with `inverse` = limit / max|x|
// of its range (quantize_with has checked it is regular).
template <bool kScaled>
void quantize_values(const float* __restrict row, size_t depth, int32_t limit,
                     const float* __restrict multiplier, float inverse, int8_t* __restrict q) {
  const float codes = static_cast<float>(limit);
  for (size_t k = 0; k < depth; ++k) {
    // |value·inverse| <= L up to one rounding, which rounds back to L.
    float v = round_half_even(scaled_value<kScaled>(row, multiplier, k) * inverse);
    v = v > codes ? codes : v;
    v = v < -codes ? -codes : v;
    q[k] = static_cast<int8_t>(static_cast<int32_t>(v));
  }
  for (size_t k = depth; k < padded_depth(depth); ++k) q[k] = 0;
}

uint32_t portable_row_max_bits(const float* row, size_t depth, const float* multiplier) {
  return multiplier != nullptr ? row_max_bits<true>(row, depth, multiplier)
                               : row_max_bits<false>(row, depth, nullptr);
}

void portable_row(const float* row, size_t depth, int32_t limit, const float* multiplier,
                  float inverse, int8_t* q) {
  if (multiplier != nullptr) {
    quantize_values<true>(row, depth, limit, multiplier, inverse, q);
  } else {
    quantize_values<false>(row, depth, limit, nullptr, inverse, q);
  }
}

}  // namespace

void quantize_irregular_row(uint32_t max_bits, size_t depth, int8_t* q, float* scale) {
  // inf/NaN: NaN (the output row becomes NaN on every CPU alike). All zero,
  // or max|x| < L / FLT_MAX (~3.7e-37 for L = 127, subnormals included):
  // L / max|x| would overflow and 0·inf be NaN; such a row's products are
  // below any normal bias, so it quantizes as the zero row it all but is.
  *scale = max_bits >= 0x7F800000u ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
  std::memset(q, 0, padded_depth(depth));
}

void quantize_rows(const float* x, size_t rows, size_t depth, size_t x_stride, int32_t limit,
                   const float* multiplier, int8_t* xq, float* scale) {
  quantize_with<portable_row_max_bits, portable_row, false>(x, rows, depth, x_stride, limit,
                                                            multiplier, xq, scale);
}

void quantize_tensor(const float* x, size_t rows, size_t depth, size_t x_stride, int32_t limit,
                     const float* multiplier, int8_t* xq, float* scale) {
  quantize_with<portable_row_max_bits, portable_row, true>(x, rows, depth, x_stride, limit,
                                                           multiplier, xq, scale);
}

void quantize_fixed(const float* x, size_t rows, size_t depth, size_t x_stride, int32_t limit,
                    const float* multiplier, float inverse, int8_t* xq, float* scale) {
  quantize_fixed_with<portable_row_max_bits, portable_row>(x, rows, depth, x_stride, limit,
                                                           multiplier, inverse, xq, scale);
}

void gemm_portable(const GemmArgs& a, size_t first_block, size_t block_count) {
  const PackedWeights& w = *a.weights;
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    const int8_t* block = w.blocks + b * w.groups * kGroupBytes;
    const size_t n0 = b * kBlockColumns;
    const size_t width = w.columns - n0 < kBlockColumns ? w.columns - n0 : kBlockColumns;
    for (size_t m = 0; m < a.rows; ++m) {
      const int8_t* xr = a.xq + m * a.xq_stride;
      int32_t sum[kBlockColumns] = {};
      for (size_t g = 0; g < w.groups; ++g) {
        const int8_t* group = block + g * kGroupBytes;
        const int8_t* xg = xr + g * kGroupDepth;
        // A group of zero codes adds 0 to an exact sum: skipped, which makes
        // this also the zero-skipping portable kernel (int8_gemm_sparse.h).
        if (load_group(xg) == 0) continue;
        for (size_t c = 0; c < kBlockColumns; ++c) {
          for (size_t j = 0; j < kGroupDepth; ++j) {
            sum[c] += static_cast<int32_t>(xg[j]) * group[c * kGroupDepth + j];
          }
        }
      }
      float* yr = a.y + m * a.y_stride + n0;
      for (size_t c = 0; c < width; ++c) {
        yr[c] = dequantize(shifted_sum(sum[c], a, n0 + c), a.x_scale[m], w.scale[n0 + c],
                           w.bias[n0 + c], a.relu);
      }
    }
  }
}

size_t available_gemm_kernels(GemmVariant* out, size_t capacity) {
  GemmVariant all[8];
  size_t count = 0;
  const CpuFeatures& cpu = cpu_features();
#if defined(__x86_64__)
  if (cpu.avx512_vnni) {
    all[count++] = {gemm_avx512_vnni, "avx512-vnni",
                    quantize_with<row_max_bits_avx512, quantize_row_avx512, false>,
                    quantize_with<row_max_bits_avx512, quantize_row_avx512, true>,
                    quantize_fixed_with<row_max_bits_avx512, quantize_row_avx512>, 100};
  }
  if (cpu.avx_vnni) {  // AVX2's quantizer: the same codes
    all[count++] = {gemm_avx_vnni, "avx-vnni",
                    quantize_with<row_max_bits_avx2, quantize_row_avx2, false>,
                    quantize_with<row_max_bits_avx2, quantize_row_avx2, true>,
                    quantize_fixed_with<row_max_bits_avx2, quantize_row_avx2>, 90};
  }
  if (cpu.avx512) {  // AVX-512 without VNNI (Skylake-SP/X)
    all[count++] = {gemm_avx512bw, "avx512bw",
                    quantize_with<row_max_bits_avx512, quantize_row_avx512, false>,
                    quantize_with<row_max_bits_avx512, quantize_row_avx512, true>,
                    quantize_fixed_with<row_max_bits_avx512, quantize_row_avx512>, 80};
  }
  if (cpu.avx2) {  // two ways to apply the sign (x86/int8_gemm_avx2.cc), the faster first
    const GemmVariant xor_sub = {gemm_avx2, "avx2",
                                 quantize_with<row_max_bits_avx2, quantize_row_avx2, false>,
                                 quantize_with<row_max_bits_avx2, quantize_row_avx2, true>,
                                 quantize_fixed_with<row_max_bits_avx2, quantize_row_avx2>, 60};
    GemmVariant vpsignb = xor_sub;
    vpsignb.kernel = gemm_avx2_vpsignb;
    vpsignb.name = "avx2-vpsignb";
    all[count++] = cpu.intel ? vpsignb : xor_sub;
    all[count++] = cpu.intel ? xor_sub : vpsignb;
  }
#endif
#if defined(__aarch64__)
  if (cpu.neon_dotprod) {
    all[count++] = {gemm_neon_dotprod, "neon-dotprod", quantize_rows, quantize_tensor,
                    quantize_fixed, 32};
  }
  if (cpu.neon) {
    all[count++] = {gemm_neon, "neon", quantize_rows, quantize_tensor, quantize_fixed, 12};
  }
#endif
#if defined(__wasm_simd128__)
  all[count++] = {gemm_wasm_simd, "wasm-simd128", quantize_rows, quantize_tensor,
                  quantize_fixed, 16};
#endif
  (void)cpu;
  all[count++] = {gemm_portable, "portable", quantize_rows, quantize_tensor, quantize_fixed, 6};
  const size_t written = count < capacity ? count : capacity;
  for (size_t i = 0; i < written; ++i) out[i] = all[i];
  return written;
}

GemmVariant best_gemm_kernel() {
  GemmVariant best;
  (void)available_gemm_kernels(&best, 1);
  return best;
}

}  // namespace edgemt::kernels::int8
