// plan_workspace: every buffer documented in models/transformer/workspace.h is carved,
// with its documented size and lifetime, 64-byte aligned, inside the arena
// and disjoint from every buffer live at the same time (spare bytes
// included); the encoder's temporaries share memory with the decoder's
// buffers; unused layers get no buffers.
#include "models/transformer/workspace.h"

#include "kernels/int8_gemm.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace edgemt::transformer;  // the family under test

namespace edgemt {
namespace {

using namespace run_step;
using namespace encoder_steps;

struct Buffer {
  std::string name;
  const void* data;
  size_t bytes;  // documented size
  Lifetime lifetime;
};

// The documented shapes and lifetimes, written out from the header's comments.
std::vector<Buffer> documented(const WorkspaceShape& s, const Workspace& w) {
  const size_t ns = s.source_rows, r = s.rows, t = s.max_target_len, d = s.d_model,
               f = s.ffn_dim, v = s.vocab;
  const size_t enc_stride = s.max_source_len * s.max_source_len;
  const size_t dec_stride = std::max(s.max_source_len, t + 1);
  const Lifetime layers{kDecodeLayers, kDecodeLayers};
  const Lifetime whole{kDecodeLayers, kDecodeSearch};
  const Lifetime dec_linears{kDecodeLayers, kDecodeOutput};
  constexpr size_t F = sizeof(float);
  std::vector<Buffer> b = {
      {"enc_x", w.enc_x, ns * d * F, {kEmbed, kCrossKv}},
      {"enc_qkv", w.enc_qkv, ns * 3 * d * F, {kAttnQkv, kAttnContext}},
      {"enc_ctx", w.enc_ctx, ns * d * F, {kAttnContext, kAttnOut}},
      {"enc_out", w.enc_out, ns * d * F, {kAttnOut, kFfnOut}},
      {"enc_norm", w.enc_norm, ns * d * F, {kAttnNorm, kFfnIn}},
      {"enc_ffn", w.enc_ffn, ns * f * F, {kFfnIn, kFfnOut}},
      {"dec_x", w.dec_x, r * d * F, {kDecodeLayers, kDecodeOutput}},
      {"dec_qkv", w.dec_qkv, r * 3 * d * F, layers},
      {"dec_q", w.dec_q, r * d * F, layers},
      {"dec_ctx", w.dec_ctx, r * d * F, layers},
      {"dec_out", w.dec_out, r * d * F, layers},
      {"dec_norm", w.dec_norm, r * d * F, layers},
      {"dec_ffn", w.dec_ffn, r * f * F, layers},
      {"logits", w.logits, r * v * F, {kDecodeOutput, kDecodeSearch}},
      {"enc_attention_scratch", w.enc_attention_scratch, s.workers * enc_stride * F,
       {kAttnContext, kAttnContext}},
      {"dec_attention_scratch", w.dec_attention_scratch, s.workers * dec_stride * F, layers},
  };
  b.push_back({"cache_rows", w.cache_rows, r * t * sizeof(size_t), whole});
  if (s.max_beam > 1) {
    b.push_back({"cache_rows_scratch", w.cache_rows_scratch, s.max_beam * t * sizeof(size_t),
                 {kDecodeSearch, kDecodeSearch}});
  }
  for (size_t l = 0; l < s.decoder_layers; ++l) {
    b.push_back({"memory_kv." + std::to_string(l), w.memory_kv[l], ns * 2 * d * F, {kCrossKv, kDecodeSearch}});
    b.push_back({"k_cache." + std::to_string(l), w.k_cache[l], r * t * d * F, whole});
    b.push_back({"v_cache." + std::to_string(l), w.v_cache[l], r * t * d * F, whole});
  }
  const size_t depth = std::max(d, f);
  const Lifetime encoder_linears{kAttnQkv, kCrossKv};
  if (s.int8) {
    const size_t padded = kernels::int8::padded_depth(depth);
    b.push_back({"enc quantized", w.enc_linear_scratch.quantized, ns * padded, encoder_linears});
    b.push_back({"enc row_scale", w.enc_linear_scratch.row_scale, ns * F, encoder_linears});
    b.push_back({"dec quantized", w.dec_linear_scratch.quantized, r * padded, dec_linears});
    b.push_back({"dec row_scale", w.dec_linear_scratch.row_scale, r * F, dec_linears});
  }
  if (s.f16) {
    const size_t enc_out = std::max(3 * d, f), dec_out = std::max(enc_out, v);
    b.push_back({"enc half_input", w.enc_linear_scratch.half_input, (ns * depth + 16) * 2, encoder_linears});
    b.push_back({"enc half_output", w.enc_linear_scratch.half_output, (ns * enc_out + 16) * 2, encoder_linears});
    b.push_back({"dec half_input", w.dec_linear_scratch.half_input, (r * depth + 16) * 2, dec_linears});
    b.push_back({"dec half_output", w.dec_linear_scratch.half_output, (r * dec_out + 16) * 2, dec_linears});
  }
  return b;
}

struct Free {
  void operator()(uint8_t* p) const { std::free(p); }
};

bool live_together(Lifetime a, Lifetime b) { return a.first <= b.last && b.first <= a.last; }

void check_plan(const WorkspaceShape& shape) {
  Arena arena;
  Workspace measured;
  plan_workspace(shape, &arena, &measured);
  CHECK(measured.enc_x == nullptr);  // planning: no memory yet
  CHECK(measured.logits == nullptr);
  REQUIRE(arena.finish_plan());
  CHECK(measured.enc_scratch_stride == shape.max_source_len * shape.max_source_len);
  CHECK(measured.dec_scratch_stride == std::max(shape.max_source_len, shape.max_target_len + 1));
  CHECK(measured.max_target_len == shape.max_target_len);

  std::unique_ptr<uint8_t, Free> block(static_cast<uint8_t*>(std::aligned_alloc(64, arena.size() + 64)));
  REQUIRE(block != nullptr);
  const uint8_t* base = block.get();
  arena.bind(block.get());
  Workspace w;
  plan_workspace(shape, &arena, &w);
  CHECK_FALSE(arena.overflowed());

  const std::vector<Buffer> buffers = documented(shape, w);
  CHECK(buffers.size() == arena.request_count());  // no hidden buffers
  size_t total = 0;
  for (const Buffer& b : buffers) {
    CAPTURE(b.name);
    REQUIRE(b.data != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(b.data) % Arena::kAlignment == 0);
    const auto* begin = static_cast<const uint8_t*>(b.data);
    CHECK(begin >= base);
    CHECK(begin + b.bytes + Arena::kAlignment <= base + arena.size());
    total += b.bytes;
  }
  // Live together: disjoint, spare bytes included.
  for (size_t i = 0; i < buffers.size(); ++i) {
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!live_together(buffers[i].lifetime, buffers[j].lifetime)) continue;
      CAPTURE(buffers[i].name);
      CAPTURE(buffers[j].name);
      const auto* a = static_cast<const uint8_t*>(buffers[i].data);
      const auto* b = static_cast<const uint8_t*>(buffers[j].data);
      CHECK((a + buffers[i].bytes + Arena::kAlignment <= b || b + buffers[j].bytes + Arena::kAlignment <= a));
    }
  }
  // Sharing happened: the arena is smaller than the buffers side by side,
  // and holds no more than them plus spare bytes and alignment.
  CHECK(arena.size() < arena.unshared_size());
  CHECK(arena.unshared_size() <= total + buffers.size() * 2 * Arena::kAlignment);

  // Layers past decoder_layers get nothing.
  for (size_t l = shape.decoder_layers; l < kMaxLayers; ++l) {
    CAPTURE(l);
    CHECK(w.memory_kv[l] == nullptr);
    CHECK(w.k_cache[l] == nullptr);
    CHECK(w.v_cache[l] == nullptr);
  }
  if (shape.max_beam == 1) CHECK(w.cache_rows_scratch == nullptr);
}

TEST_CASE("models/transformer/workspace: buffers live together are disjoint, aligned and of the documented sizes") {
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

TEST_CASE("models/transformer/workspace: the decoder row bounds the attention scratch for short sources") {
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

TEST_CASE("models/transformer/workspace: odd sizes keep every buffer aligned") {
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

TEST_CASE("models/transformer/workspace: int8 and f16 Linear scratch, one for the encoder and one for the decoder") {
  WorkspaceShape shape;
  shape.source_rows = 2 * 10;
  shape.max_source_len = 10;
  shape.rows = 2 * 4;
  shape.max_beam = 4;
  shape.max_target_len = 12;
  shape.d_model = 16;
  shape.ffn_dim = 40;
  shape.vocab = 100;  // wider than 3d and f: only the decoder's output scratch holds it
  shape.encoder_layers = 1;
  shape.decoder_layers = 2;
  shape.workers = 2;
  shape.int8 = true;
  check_plan(shape);
  shape.int8 = false;
  shape.f16 = true;
  check_plan(shape);
}

}  // namespace
}  // namespace edgemt
