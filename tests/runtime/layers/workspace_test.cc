// plan_workspace: every buffer documented in layers/workspace.h is carved,
// with its documented size, 64-byte aligned, inside the arena and disjoint
// from every other (spare bytes included); the measuring and the real pass
// agree; unused layers get no buffers.
#include "layers/workspace.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace edgemt {
namespace {

struct Buffer {
  std::string name;
  const float* data;
  size_t floats;  // documented size
};

// The documented shapes, written out from the header's comments.
std::vector<Buffer> documented(const WorkspaceShape& s, const Workspace& w) {
  const size_t ns = s.source_rows, r = s.rows, t = s.max_target_len, d = s.d_model,
               f = s.ffn_dim, v = s.vocab;
  const size_t stride = std::max(s.max_source_len * s.max_source_len, t + 1);
  std::vector<Buffer> b = {
      {"enc_x", w.enc_x, ns * d},       {"enc_qkv", w.enc_qkv, ns * 3 * d},
      {"enc_ctx", w.enc_ctx, ns * d},   {"enc_out", w.enc_out, ns * d},
      {"enc_norm", w.enc_norm, ns * d}, {"enc_ffn", w.enc_ffn, ns * f},
      {"dec_x", w.dec_x, r * d},        {"dec_qkv", w.dec_qkv, r * 3 * d},
      {"dec_q", w.dec_q, r * d},        {"dec_ctx", w.dec_ctx, r * d},
      {"dec_out", w.dec_out, r * d},    {"dec_norm", w.dec_norm, r * d},
      {"dec_ffn", w.dec_ffn, r * f},    {"logits", w.logits, r * v},
      {"attention_scratch", w.attention_scratch, s.workers * stride},
      {"reorder_scratch", w.reorder_scratch, s.max_beam * t * d},
  };
  for (size_t l = 0; l < s.decoder_layers; ++l) {
    b.push_back({"memory_kv." + std::to_string(l), w.memory_kv[l], ns * 2 * d});
    b.push_back({"k_cache." + std::to_string(l), w.k_cache[l], r * t * d});
    b.push_back({"v_cache." + std::to_string(l), w.v_cache[l], r * t * d});
  }
  return b;
}

struct Block {
  explicit Block(size_t bytes)
      : data(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 64) / 64 * 64))) {}
  ~Block() { std::free(data); }
  uint8_t* data;
};

void check_plan(const WorkspaceShape& shape) {
  Arena measure;
  Workspace measured;
  plan_workspace(shape, &measure, &measured);
  CHECK_FALSE(measure.overflowed());
  CHECK(measured.enc_x == nullptr);  // measuring: no memory yet
  CHECK(measured.logits == nullptr);
  const size_t expected_stride =
      std::max(shape.max_source_len * shape.max_source_len, shape.max_target_len + 1);
  CHECK(measured.scratch_stride == expected_stride);
  CHECK(measured.max_target_len == shape.max_target_len);

  Block block(measure.used());
  REQUIRE(block.data != nullptr);
  Arena arena(block.data, measure.used());
  Workspace w;
  plan_workspace(shape, &arena, &w);
  CHECK_FALSE(arena.overflowed());
  CHECK(arena.used() == measure.used());
  CHECK(w.scratch_stride == expected_stride);
  CHECK(w.max_target_len == shape.max_target_len);

  std::vector<Buffer> buffers = documented(shape, w);
  size_t total_floats = 0;
  for (const Buffer& b : buffers) {
    CAPTURE(b.name);
    REQUIRE(b.data != nullptr);
    const auto address = reinterpret_cast<uintptr_t>(b.data);
    CHECK(address % Arena::kAlignment == 0);
    const auto* begin = reinterpret_cast<const uint8_t*>(b.data);
    CHECK(begin >= block.data);
    CHECK(begin + b.floats * sizeof(float) + Arena::kAlignment <= block.data + arena.used());
    total_floats += b.floats;
  }
  // Disjoint, spare bytes included: sorted by address, each buffer ends (with
  // its kAlignment spare bytes) before the next begins.
  std::sort(buffers.begin(), buffers.end(),
            [](const Buffer& a, const Buffer& b) { return a.data < b.data; });
  for (size_t i = 0; i + 1 < buffers.size(); ++i) {
    CAPTURE(buffers[i].name);
    CAPTURE(buffers[i + 1].name);
    const auto* end = reinterpret_cast<const uint8_t*>(buffers[i].data) +
                      buffers[i].floats * sizeof(float) + Arena::kAlignment;
    CHECK(end <= reinterpret_cast<const uint8_t*>(buffers[i + 1].data));
  }
  // No hidden buffers: the arena is the documented bytes plus at most
  // 2 * kAlignment (spare bytes and alignment) per buffer.
  CHECK(arena.used() <= total_floats * sizeof(float) + buffers.size() * 2 * Arena::kAlignment);

  // Layers past decoder_layers get nothing.
  for (size_t l = shape.decoder_layers; l < kMaxLayers; ++l) {
    CAPTURE(l);
    CHECK(w.memory_kv[l] == nullptr);
    CHECK(w.k_cache[l] == nullptr);
    CHECK(w.v_cache[l] == nullptr);
  }
}

TEST_CASE("layers/workspace: buffers are disjoint aligned and of the documented sizes") {
  WorkspaceShape shape;
  shape.source_rows = 4 * 9;
  shape.max_source_len = 9;
  shape.rows = 4 * 3;
  shape.max_beam = 3;
  shape.max_target_len = 11;
  shape.d_model = 16;
  shape.ffn_dim = 24;
  shape.vocab = 40;
  shape.encoder_layers = 2;
  shape.decoder_layers = 3;
  shape.workers = 2;
  CHECK(shape.max_source_len * shape.max_source_len > shape.max_target_len + 1);
  check_plan(shape);
}

TEST_CASE("layers/workspace: the decoder row bounds the attention scratch for short sources") {
  WorkspaceShape shape;
  shape.source_rows = 3;
  shape.max_source_len = 3;
  shape.rows = 5;
  shape.max_beam = 5;
  shape.max_target_len = 30;  // 31 > 3 * 3
  shape.d_model = 8;
  shape.ffn_dim = 16;
  shape.vocab = 32;
  shape.encoder_layers = 1;
  shape.decoder_layers = 1;
  shape.workers = 3;
  check_plan(shape);
}

TEST_CASE("layers/workspace: odd sizes keep every buffer aligned") {
  WorkspaceShape shape;
  shape.source_rows = 7;
  shape.max_source_len = 7;
  shape.rows = 1;
  shape.max_beam = 1;
  shape.max_target_len = 5;
  shape.d_model = 3;
  shape.ffn_dim = 5;
  shape.vocab = 13;
  shape.encoder_layers = 1;
  shape.decoder_layers = 2;
  shape.workers = 1;
  check_plan(shape);
}

}  // namespace
}  // namespace edgemt
