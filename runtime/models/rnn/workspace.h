// The RNN family's run-phase buffers, carved from the Translator's arena
// (core/arena.h) with their lifetimes in run steps, and the context the
// encoder and decoder run with.
//
// Shapes: Ns packed source rows, B = max_batch sentences, R = B·max_beam
// hypothesis rows (and state slots), L layers, H hidden, U encoder units
// per direction (H/2 bidirectional, else H), G gates (LSTM 4, GRU 3), DI the
// first decoder layer's input width, V vocabulary, S = longest source.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/arena.h"
#include "core/parallel.h"
#include "edgemt/profile.h"
#include "layers/linear_scratch.h"
#include "models/encoder_decoder.h"
#include "models/rnn/config.h"
#include "models/output_head.h"
#include "models/rnn/weights.h"

namespace edgemt::rnn {

// The encoder's run steps, its own list inside the frame of
// models/encoder_decoder.h.
namespace encoder_steps {
inline constexpr uint16_t kEmbed = encoder_step(0);   // source embeddings
inline constexpr uint16_t kLayers = encoder_step(1);  // every encoder layer, both directions
inline constexpr uint16_t kKeys = encoder_step(2);    // attention keys K h_i
}  // namespace encoder_steps

struct RnnWorkspaceShape {
  size_t source_rows = 0;     // Ns
  size_t sentences = 0;       // B
  size_t max_source_len = 0;  // S
  size_t rows = 0;            // R
  bool int8 = false;          // plan the int8 Linears' quantized-input scratch
  bool f16 = false;           // plan the f16 Linears' half scratch
};

struct RnnWorkspace {
  // Encoder.
  float* enc_x = nullptr;       // [Ns, max(Es, H)] a layer's input   [kEmbed, kLayers]
  float* enc_y = nullptr;       // [Ns, H] a layer's output (not the last)  kLayers
  float* enc_gx = nullptr;      // [Ns, G·U] input projections of one direction  kLayers
  float* enc_gh = nullptr;      // [B, G·U]  kLayers
  float* enc_h = nullptr;       // [B, U] one direction's state  kLayers
  float* enc_c = nullptr;       // [B, U] (LSTM)  kLayers
  float* memory = nullptr;      // [Ns, H] the last layer's outputs: attention values  [kLayers, kDecodeSearch]
  float* keys = nullptr;        // [Ns, H] K h_i (General, Additive)  [kKeys, kDecodeSearch]
  // The decoder's first state per sentence: the encoder's final states
  // ([forward; backward] when bidirectional), per layer [B, H].
  float* init_h[kMaxRnnLayers] = {};  // [kLayers, kDecodeSearch]
  float* init_c[kMaxRnnLayers] = {};  // (LSTM)

  // Decoder state per slot (slot s·K + j: hypothesis j of sentence s), kWholeDecode.
  float* state_h[kMaxRnnLayers] = {};  // [R, H]
  float* state_c[kMaxRnnLayers] = {};  // [R, H] (LSTM)
  float* state_feed = nullptr;         // [R, H] the last attentional vector (input feed)
  float* reorder_scratch = nullptr;    // [max_beam, H]  kDecodeSearch

  // One decoder step, rows in step order.
  float* row_h[kMaxRnnLayers] = {};  // [R, H] state in, then out   kDecodeLayers
  float* row_c[kMaxRnnLayers] = {};  // [R, H] (LSTM)
  float* dec_x = nullptr;       // [R, DI] first layer input
  float* dec_gx = nullptr;      // [R, G·H]
  float* dec_gh = nullptr;      // [R, G·H]
  float* dec_query = nullptr;   // [R, H] Q s + b (Additive)
  float* dec_cat = nullptr;     // [R, 2H] [c; s] or [s; c]
  float* dec_attn = nullptr;    // [R, H] attentional vector a_t   [kDecodeLayers, kDecodeOutput]
  float* context = nullptr;     // [R, H]
  float* weights = nullptr;     // [R, S] attention weights of the step  [kDecodeLayers, kDecodeSearch]
  float* logits = nullptr;      // [R, V]  [kDecodeOutput, kDecodeSearch]

  LinearScratch enc_linear_scratch;  // Ns rows
  LinearScratch dec_linear_scratch;  // R rows
  OutputHead::Scratch head_scratch;  // the output head's own (its plan())
  size_t max_source_len = 0;
};

void plan_workspace(const RnnConfig& config, const RnnWorkspaceShape& shape, size_t max_beam,
                        Arena* arena, RnnWorkspace* workspace);

struct RnnRunContext {
  const RnnConfig* config = nullptr;
  const RnnWeights* weights = nullptr;
  RnnWorkspace* workspace = nullptr;
  Parallel parallel;
  Profile* profile = nullptr;
};

}  // namespace edgemt::rnn
