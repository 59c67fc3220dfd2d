#include "kernels/f32_gemm.h"

#include <cmath>
#include <cstring>

#include "core/cpu_features.h"
#include "kernels/f32_gemm_sparse.h"
#include "kernels/portable_math.h"

namespace edgemt::kernels::f32 {

size_t packed_bytes(size_t columns, size_t depth) {
  const size_t blocks = (columns + kBlockColumns - 1) / kBlockColumns;
  return blocks * kBlockColumns * (depth + 1) * sizeof(float);
}

void pack_block(const float* const* lanes, const float* const* next, size_t stride, size_t depth,
                float* block) {
  if (next != nullptr && stride == 1) {
    // One prefetch per 64-byte line. Rows picked by id (a shortlist's
    // candidates) come from all over a large table: transposing one block
    // while the next one's rows arrive, with the order below, halved
    // pack_rows' time.
    for (size_t c = 0; c < kBlockColumns; ++c) {
      for (size_t k = 0; next[c] != nullptr && k < depth; k += 16) __builtin_prefetch(next[c] + k);
    }
  }
#if defined(__x86_64__)
  // 16 whole rows: transposed in registers (the same floats moved).
  const CpuFeatures& cpu = cpu_features();
  if (stride == 1 && (cpu.avx512 || cpu.avx2)) {
    bool whole = true;
    for (size_t c = 0; c < kBlockColumns; ++c) whole = whole && lanes[c] != nullptr;
    if (whole && cpu.avx512) return pack_rows_block_avx512(lanes, depth, block);
    if (whole) return pack_rows_block_avx2(lanes, depth, block);
  }
#endif
  // Depth outer: each 64-byte output line is written whole, and the 16
  // sources are read in step (a column at a time wrote 16 lines per k).
  for (size_t k = 0; k < depth; ++k) {
    float* out = block + k * kBlockColumns;
    for (size_t c = 0; c < kBlockColumns; ++c) {
      out[c] = lanes[c] != nullptr ? lanes[c][k * stride] : 0.0f;
    }
  }
}

bool has_tiny_values(const float* v, size_t n) {
  unsigned any = 0;  // branch-free, so that the loop vectorizes
  for (size_t i = 0; i < n; ++i) {
    const float a = std::fabs(v[i]);
    any |= static_cast<unsigned>(a < kTinyMagnitude) & static_cast<unsigned>(a > 0.0f);
  }
  return any != 0;
}

bool pack_block_range(const float* w, const float* bias, size_t columns, size_t depth,
                      size_t first_block, size_t block_count, void* storage,
                      const int32_t* ids, bool check_tiny) {
  const size_t blocks = (columns + kBlockColumns - 1) / kBlockColumns;
  float* packed = static_cast<float*>(storage);
  float* packed_bias = packed + blocks * depth * kBlockColumns;
  auto row_of = [&](size_t n) { return ids != nullptr ? static_cast<size_t>(ids[n]) : n; };
  // Block b's rows of w: rows[b % 2]; the next block's, rows[(b + 1) % 2].
  const float* rows[2][kBlockColumns];
  auto lanes_of = [&](size_t b, const float** lanes) {
    for (size_t c = 0; c < kBlockColumns; ++c) {
      const size_t n = b * kBlockColumns + c;
      lanes[c] = n < columns ? w + row_of(n) * depth : nullptr;
    }
  };
  lanes_of(first_block, rows[first_block % 2]);
  bool tiny = false;
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    const bool more = b + 1 < first_block + block_count;
    if (more) lanes_of(b + 1, rows[(b + 1) % 2]);
    float* block = packed + b * depth * kBlockColumns;
    pack_block(rows[b % 2], more ? rows[(b + 1) % 2] : nullptr, 1, depth, block);
    tiny = tiny || (check_tiny && has_tiny_values(block, depth * kBlockColumns));
    for (size_t c = 0; c < kBlockColumns; ++c) {
      const size_t n = b * kBlockColumns + c;
      packed_bias[n] = n < columns && bias != nullptr ? bias[row_of(n)] : 0.0f;
    }
  }
  return tiny;
}

void pack_weights(const float* w, const float* bias, size_t columns, size_t depth, void* storage,
                  PackedWeights* out, const int32_t* ids, bool check_tiny) {
  const size_t blocks = (columns + kBlockColumns - 1) / kBlockColumns;
  const bool tiny = pack_block_range(w, bias, columns, depth, 0, blocks, storage, ids, check_tiny);
  float* packed = static_cast<float*>(storage);
  float* packed_bias = packed + blocks * depth * kBlockColumns;
  out->blocks = packed;
  out->bias = packed_bias;
  out->columns = columns;
  out->depth = depth;
  out->block_count = blocks;
  out->tiny = !check_tiny ? TinyWeights::kUnknown : tiny ? TinyWeights::kSome : TinyWeights::kNone;
}

void unpack_row(const PackedWeights& w, size_t n, float* out) {
  const float* column = w.blocks + (n / kBlockColumns) * w.depth * kBlockColumns + n % kBlockColumns;
  for (size_t k = 0; k < w.depth; ++k) out[k] = column[k * kBlockColumns];
}

namespace {

// The portable kernel's loop; with kSkipZeros the terms whose x is zero are
// left out (the zero-skipping kernel, f32_gemm_sparse.h).
template <bool kSkipZeros>
void portable_blocks(const GemmArgs& a, size_t first_block, size_t block_count) {
  const PackedWeights& w = *a.weights;
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    const float* block = w.blocks + b * w.depth * kBlockColumns;
    const size_t n0 = b * kBlockColumns;
    const size_t width = w.columns - n0 < kBlockColumns ? w.columns - n0 : kBlockColumns;
    for (size_t m = 0; m < a.rows; ++m) {
      const float* x = a.x + m * a.x_stride;
      float acc[kBlockColumns];
      for (size_t c = 0; c < kBlockColumns; ++c) acc[c] = w.bias[n0 + c];
      for (size_t k = 0; k < w.depth; ++k) {
        if (kSkipZeros && x[k] == 0.0f) continue;  // NaN is not skipped
        const float* wk = block + k * kBlockColumns;
        for (size_t c = 0; c < kBlockColumns; ++c) acc[c] = math::fma_f32(x[k], wk[c], acc[c]);
      }
      const float low = a.relu ? 0.0f : -INFINITY;
      for (size_t c = 0; c < kBlockColumns; ++c) acc[c] = acc[c] > low ? acc[c] : low;
      std::memcpy(a.y + m * a.y_stride + n0, acc, width * sizeof(float));
    }
  }
}

}  // namespace

void gemm_portable(const GemmArgs& a, size_t first_block, size_t block_count) {
  portable_blocks<false>(a, first_block, block_count);
}

void sparse_gemm_portable(const GemmArgs& a, size_t first_block, size_t block_count) {
  portable_blocks<true>(a, first_block, block_count);
}

GemmKernel fast_gemm_kernel() {
#if defined(__x86_64__)
  const CpuFeatures& cpu = cpu_features();
  if (cpu.avx512) return gemm_avx512;
  return cpu.avx2 && cpu.fma ? gemm_avx2 : nullptr;
#elif defined(__aarch64__)
  return cpu_features().neon ? gemm_neon : gemm_portable;
#elif defined(__wasm_simd128__)
  return gemm_wasm_simd;
#elif !EDGEMT_WITH_XNNPACK
  return gemm_portable;  // a build without XNNPACK has no other
#else
  return nullptr;
#endif
}

const char* fast_gemm_kernel_name() {
  const GemmKernel kernel = fast_gemm_kernel();
#if defined(__x86_64__)
  if (kernel == gemm_avx512) return "avx512";
  if (kernel == gemm_avx2) return "avx2+fma3";
#elif defined(__aarch64__)
  if (kernel == gemm_neon) return "neon";
#elif defined(__wasm_simd128__)
  if (kernel == gemm_wasm_simd) return "wasm-simd128";
#endif
  return kernel == gemm_portable ? "portable" : "";
}

bool replaces_xnnpack() {
#if !EDGEMT_WITH_XNNPACK
  return true;  // nothing to replace: every f32 matrix is on the own GEMM
#elif defined(__x86_64__)
  return fast_gemm_kernel() != nullptr;
#else
  return false;
#endif
}

}  // namespace edgemt::kernels::f32
