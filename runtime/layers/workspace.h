// Workspace: the run-phase buffers of the encoder and decoder, carved from
// the Translator's arena by plan_workspace() (see core/arena.h).
//
// Shapes (Ns = max_batch·max_source_len packed source rows, R = max_batch·
// max_beam hypothesis rows, T = max_target_len, d = d_model, f = ffn_dim,
// V = vocab):
#pragma once

#include <cstddef>

#include "core/arena.h"
#include "layers/transformer_weights.h"

namespace edgemt {

struct WorkspaceShape {
  size_t source_rows = 0;     // Ns
  size_t max_source_len = 0;  // longest single source
  size_t rows = 0;            // R
  size_t max_beam = 1;
  size_t max_target_len = 0;  // T
  size_t d_model = 0;
  size_t ffn_dim = 0;
  size_t vocab = 0;
  size_t encoder_layers = 0;
  size_t decoder_layers = 0;
  size_t workers = 1;
  bool int8 = false;          // int8 Linears: plan their quantized-input scratch
  bool f16 = false;           // f16 Linears: plan their half input/output scratch
};

struct Workspace {
  // Encoder.
  float* enc_x = nullptr;     // [Ns, d]  activations; the encoder output at the end
  float* enc_qkv = nullptr;   // [Ns, 3d]
  float* enc_ctx = nullptr;   // [Ns, d]  attention context (heads side by side)
  float* enc_out = nullptr;   // [Ns, d]  sub-layer output
  float* enc_norm = nullptr;  // [Ns, d]  pre-norm sub-layer input
  float* enc_ffn = nullptr;   // [Ns, f]
  float* memory_kv[kMaxLayers] = {};  // [Ns, 2d] cross-attention K | V per decoder layer

  // Decoder self-attention cache per layer: [R slots, T, d]. Sentence s owns
  // slots [s·beam, s·beam + beam): greedy never moves a cache row, beam
  // search reorders only within a sentence (through reorder_scratch).
  float* k_cache[kMaxLayers] = {};
  float* v_cache[kMaxLayers] = {};
  float* reorder_scratch = nullptr;  // [max_beam, T, d]
  float* dec_x = nullptr;     // [R, d]
  float* dec_qkv = nullptr;   // [R, 3d]
  float* dec_q = nullptr;     // [R, d]
  float* dec_ctx = nullptr;   // [R, d]
  float* dec_out = nullptr;   // [R, d]
  float* dec_norm = nullptr;  // [R, d]
  float* dec_ffn = nullptr;   // [R, f]
  float* logits = nullptr;    // [R, V]

  // Converted operands of int8 / f16 Linears (empty for f32 ones): rows up
  // to max(Ns, R), inputs up to max(d, f) wide, f16 outputs up to max(3d, f, V).
  LinearScratch linear_scratch;

  // Attention probabilities, one slice per worker (parallel_for slot).
  float* attention_scratch = nullptr;  // [workers, scratch_stride]
  size_t max_target_len = 0;  // T: positions per cache row
  size_t scratch_stride = 0;
};

// Lays the workspace out in `arena` (measuring or real).
void plan_workspace(const WorkspaceShape& shape, Arena* arena, Workspace* workspace);

}  // namespace edgemt
