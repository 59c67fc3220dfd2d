#include "kernels/int8_gemm_marian.h"

#include "core/cpu_features.h"
#include "kernels/int8_gemm_variants.h"

namespace edgemt::kernels::int8 {
namespace {

inline int32_t saturate16(int32_t v) { return v > 32767 ? 32767 : (v < -32768 ? -32768 : v); }

// The pack's weight for column c of a block, depth k (int8_gemm.h's layout).
inline int32_t weight(const int8_t* block, size_t c, size_t k) {
  return block[(k / kGroupDepth) * kGroupBytes + c * kGroupDepth + k % kGroupDepth];
}

// S of int8_gemm_marian.h for one row (xq, depth padded to whole groups,
// an even count) and column c of `block`.
int32_t marian_sum(const GemmArgs& a, const int8_t* xq, const int8_t* block, size_t c) {
  const size_t depth = a.weights->groups * kGroupDepth;
  if (a.sum_shift != 0) {  // shifted: each pair saturates alone
    int32_t sum = 0;
    for (size_t k = 0; k < depth; k += 2) {
      sum += saturate16((xq[k] + a.sum_shift) * weight(block, c, k) +
                        (xq[k + 1] + a.sum_shift) * weight(block, c, k + 1));
    }
    return sum;
  }
  // Lane i of step t holds the pair at k = 2Lt + 2i: k / 2 mod L.
  const size_t lanes = static_cast<size_t>(a.saturating_lanes);
  int32_t lane[kAvx512bwLanes] = {};
  for (size_t k = 0; k < depth; k += 2) {
    int32_t& s = lane[(k / 2) % lanes];
    s = saturate16(s + xq[k] * weight(block, c, k) + xq[k + 1] * weight(block, c, k + 1));
  }
  int32_t sum = 0;
  for (size_t i = 0; i < lanes; ++i) sum += lane[i];
  return sum;
}

}  // namespace

void gemm_marian_portable(const GemmArgs& a, size_t first_block, size_t block_count) {
  const PackedWeights& w = *a.weights;
  for (size_t b = first_block; b < first_block + block_count; ++b) {
    const int8_t* block = w.blocks + b * w.groups * kGroupBytes;
    const size_t n0 = b * kBlockColumns;
    const size_t width = w.columns - n0 < kBlockColumns ? w.columns - n0 : kBlockColumns;
    for (size_t m = 0; m < a.rows; ++m) {
      int32_t sums[kBlockColumns];
      for (size_t c = 0; c < width; ++c) sums[c] = marian_sum(a, a.xq + m * a.xq_stride, block, c);
      float* yr = a.y + m * a.y_stride + n0;
      for (size_t c = 0; c < width; ++c) {
        yr[c] = dequantize(sums[c], a.x_scale[m], w.scale[n0 + c], w.bias[n0 + c], a.relu);
      }
    }
  }
}

GemmKernel marian_gemm_kernel() {
#if defined(__x86_64__)
  if (cpu_features().avx2) return gemm_marian_avx2;
#endif
  return gemm_marian_portable;
}

}  // namespace edgemt::kernels::int8
