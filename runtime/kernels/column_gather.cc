#include "kernels/column_gather.h"

#include <cstring>

namespace edgemt::kernels {
namespace {

size_t blocks_of(size_t count, size_t width) { return (count + width - 1) / width; }

}  // namespace

void gather_columns(const f32::PackedWeights& source, const int32_t* ids, size_t count,
                    void* storage, f32::PackedWeights* out) {
  constexpr size_t W = f32::kBlockColumns;
  const size_t depth = source.depth;
  const size_t blocks = blocks_of(count, W);
  float* packed = static_cast<float*>(storage);
  float* bias = packed + blocks * depth * W;
  bool tiny = false;
  for (size_t b = 0; b < blocks; ++b) {
    // Per column, its source block's lane: [depth] floats W apart.
    const float* lanes[W];
    for (size_t c = 0; c < W; ++c) {
      const size_t j = b * W + c;
      if (j >= count) {
        lanes[c] = nullptr;
        bias[j] = 0.0f;
        continue;
      }
      const size_t n = static_cast<size_t>(ids[j]);
      lanes[c] = source.blocks + (n / W) * depth * W + n % W;
      bias[j] = source.bias[n];
    }
    float* block = packed + b * depth * W;
    f32::pack_block(lanes, nullptr, W, depth, block);
    // Columns of a pack without tiny weights have none.
    tiny = tiny || (source.tiny != f32::TinyWeights::kNone && f32::has_tiny_values(block, depth * W));
  }
  out->blocks = packed;
  out->bias = bias;
  out->columns = count;
  out->depth = depth;
  out->block_count = blocks;
  out->tiny = tiny ? f32::TinyWeights::kSome : f32::TinyWeights::kNone;
}

void pack_rows(const float* w, const float* bias, size_t depth, const int32_t* ids, size_t count,
               void* storage, f32::PackedWeights* out, bool check_tiny) {
  f32::pack_weights(w, bias, count, depth, storage, out, ids, check_tiny);
}

void gather_columns(const int8::PackedWeights& source, const int32_t* ids, size_t count,
                    void* storage, int8::PackedWeights* out) {
  constexpr size_t W = int8::kBlockColumns;
  constexpr size_t G = int8::kGroupDepth;
  const size_t groups = source.groups;
  const size_t blocks = blocks_of(count, W);
  const size_t padded = blocks * W;
  // The part offsets of int8::pack_weights' layout (int8_gemm.cc).
  const size_t scale_at = int8::round_up(blocks * groups * int8::kGroupBytes, 64);
  const size_t bias_at = scale_at + int8::round_up(padded * sizeof(float), 64);
  const size_t sum_at = bias_at + int8::round_up(padded * sizeof(float), 64);
  uint8_t* base = static_cast<uint8_t*>(storage);
  int8_t* packed = reinterpret_cast<int8_t*>(base);
  float* scale = reinterpret_cast<float*>(base + scale_at);
  float* bias = reinterpret_cast<float*>(base + bias_at);
  int32_t* sum = reinterpret_cast<int32_t*>(base + sum_at);
  for (size_t j = 0; j < padded; ++j) {
    const size_t b = j / W;
    const size_t c = j % W;
    int8_t* lane = packed + b * groups * int8::kGroupBytes + c * G;
    if (j >= count) {
      for (size_t g = 0; g < groups; ++g) std::memset(lane + g * int8::kGroupBytes, 0, G);
      scale[j] = 0.0f;
      bias[j] = 0.0f;
      sum[j] = 0;
      continue;
    }
    const size_t n = static_cast<size_t>(ids[j]);
    const int8_t* from = source.blocks + (n / W) * groups * int8::kGroupBytes + (n % W) * G;
    for (size_t g = 0; g < groups; ++g) {
      std::memcpy(lane + g * int8::kGroupBytes, from + g * int8::kGroupBytes, G);
    }
    scale[j] = source.scale[n];
    bias[j] = source.bias[n];
    sum[j] = source.column_sum[n];
  }
  out->blocks = packed;
  out->scale = scale;
  out->bias = bias;
  out->column_sum = sum;
  out->columns = count;
  out->depth = source.depth;
  out->groups = groups;
  out->block_count = blocks;
}

int8::PackedWeights column_range(const int8::PackedWeights& source, size_t first, size_t count) {
  constexpr size_t W = int8::kBlockColumns;
  const size_t end = first + count;
  if (count == 0 || first % W != 0 || end > source.columns ||
      (end % W != 0 && end != source.columns)) {
    return int8::PackedWeights{};
  }
  int8::PackedWeights view = source;
  view.blocks = source.blocks + (first / W) * source.groups * int8::kGroupBytes;
  view.scale = source.scale + first;
  view.bias = source.bias + first;
  view.column_sum = source.column_sum + first;
  view.columns = count;
  view.block_count = blocks_of(count, W);
  return view;
}

}  // namespace edgemt::kernels
