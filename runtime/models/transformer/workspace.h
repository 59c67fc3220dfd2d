// Workspace: the run-phase buffers of the encoder and decoder, carved from
// the Translator's arena by plan_workspace() (see core/arena.h), each with
// the run steps in which it is live, so that buffers never live together
// share memory (the encoder's temporaries and the decoder's caches above all).
//
// Shapes (Ns = max_batch·max_source_len packed source rows, R = max_batch·
// max_beam hypothesis rows, T = max_target_len, d = d_model, f = ffn_dim,
// V = vocab):
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/arena.h"
#include "models/encoder_decoder.h"
#include "models/transformer/weights.h"

namespace edgemt::transformer {

// The encoder's run steps, its own list inside the frame of
// models/encoder_decoder.h (kPack before them, the decode steps after). The
// layers repeat kAttnNorm..kFfnOut: a buffer live only inside that span
// holds nothing from one layer to the next.
namespace encoder_steps {
inline constexpr uint16_t kEmbed = encoder_step(0);        // encoder x = embedding + positions
inline constexpr uint16_t kAttnNorm = encoder_step(1);     // sub-layer input (pre-norm)
inline constexpr uint16_t kAttnQkv = encoder_step(2);      // qkv projection
inline constexpr uint16_t kAttnContext = encoder_step(3);  // self-attention
inline constexpr uint16_t kAttnOut = encoder_step(4);      // output projection, residual
inline constexpr uint16_t kFfnIn = encoder_step(5);        // sub-layer input, first FFN matrix
inline constexpr uint16_t kFfnOut = encoder_step(6);       // second FFN matrix, residual
inline constexpr uint16_t kCrossKv = encoder_step(7);      // cross-attention K | V of every decoder layer
}  // namespace encoder_steps

// The run's shape (RunShape: Ns, R, T, beams, workers, attention choice)
// and what the model adds to it.
struct WorkspaceShape : RunShape {
  size_t d_model = 0;
  size_t ffn_dim = 0;
  size_t vocab = 0;
  size_t encoder_layers = 0;
  size_t decoder_layers = 0;
  size_t heads = 0;
  bool int8 = false;             // int8 Linears: plan their quantized-input scratch
  bool f16 = false;              // f16 Linears: plan their half input/output scratch
  bool raw_self_memory = false;  // TransformerConfig::raw_decoder_self_memory
  bool ssru = false;             // SSRU decoder layers: states instead of k, v caches
  // Marian's per-tensor int8 self-attention (Int8PerTensorDynamic): every
  // step computes k, v of all positions again (Workspace::self_memory).
  bool self_kv_again = false;
};

struct Workspace {
  // Encoder (lifetimes in run steps).
  float* enc_x = nullptr;     // [Ns, d]  activations; the encoder output at the end  [kEmbed, kCrossKv]
  float* enc_qkv = nullptr;   // [Ns, 3d]                                 [kAttnQkv, kAttnContext]
  float* enc_ctx = nullptr;   // [Ns, d]  attention context (heads side by side) [kAttnContext, kAttnOut]
  float* enc_out = nullptr;   // [Ns, d]  sub-layer output                [kAttnOut, kFfnOut]
  float* enc_norm = nullptr;  // [Ns, d]  pre-norm sub-layer input        [kAttnNorm, kFfnIn]
  float* enc_ffn = nullptr;   // [Ns, f]                                  [kFfnIn, kFfnOut]
  float* memory_kv[kMaxLayers] = {};  // [Ns, 2d] cross-attention K | V per decoder layer  [kCrossKv, kDecodeSearch]

  // Decoder. Self-attention cache per layer: [R·T rows, d], kWholeDecode.
  // Sentence s owns slots [s·beam, s·beam + beam). The k, v of position p
  // of the hypothesis in slot r are written once, at step p, into the next
  // free row (next_cache_row: a decode writes at most R rows per step, so
  // R·T always suffice), and never move: the rows a decode touches are
  // those its hypotheses wrote, packed together, not R·T rows' worth of
  // pages spread over [slot, T] runs (which a batch's longest sentence per
  // slot would keep resident). cache_rows[r·T + p] is the offset (in floats,
  // within a layer's cache) of the row that holds position p for the
  // hypothesis now in slot r. Reordering beams permutes these offsets
  // (positions × 8 bytes per hypothesis, through cache_rows_scratch, planned
  // only when max_beam > 1), not the cached k, v (positions × 2 × layers × d
  // floats), and attention reads its keys through them.
  float* k_cache[kMaxLayers] = {};  // (none with an SSRU decoder)
  float* v_cache[kMaxLayers] = {};
  // WorkspaceShape::self_kv_again only. Marian's decoder keeps each
  // position's self-attention input, not its k, v, and at every step
  // multiplies all of them again ([positions x hypotheses, d] in one
  // product: transformer.h DecoderLayerSelfAttention, cache=false). The same
  // in float, but an Int8PerTensorDynamic product quantizes its input with
  // one range over all its rows, so the k, v of a position change as later
  // positions widen that range. self_memory holds those inputs per layer
  // (rows as the caches', through cache_rows); each step gathers its
  // hypotheses' positions into memory_rows, multiplies them into
  // memory_qkv (with memory_scratch) and writes the k, v back into the caches.
  float* self_memory[kMaxLayers] = {};  // [R·T rows, d]   kWholeDecode
  float* memory_rows = nullptr;         // [R·T, d]        kDecodeLayers
  float* memory_qkv = nullptr;          // [R·T, 3d]       kDecodeLayers
  LinearScratch memory_scratch;         // R·T rows        kDecodeLayers
  // SSRU decoders instead: each layer's cell state c [R slots, d] (slot r's
  // row is the hypothesis now in slot r; beam reordering copies rows,
  // through ssru_state_scratch [max_beam, d]), and the gates' product
  // [R, 2d] (x~ | forget-gate input).
  float* ssru_state[kMaxLayers] = {};   // kWholeDecode
  float* ssru_state_scratch = nullptr;  // kDecodeSearch (max_beam > 1)
  float* dec_gates = nullptr;           // kDecodeLayers
  size_t* cache_rows = nullptr;          // [R slots, T]   kWholeDecode (none with SSRU)
  size_t* cache_rows_scratch = nullptr;  // [max_beam, T]  kDecodeSearch
  float* dec_x = nullptr;     // [R, d]   [kDecodeLayers, kDecodeOutput]
  float* dec_qkv = nullptr;   // [R, 3d]  kDecodeLayers, as the five below
  float* dec_qkv_raw = nullptr;  // [R, 3d] of the raw layer input (raw_self_memory only)
  float* dec_q = nullptr;     // [R, d]
  float* dec_ctx = nullptr;   // [R, d]
  float* dec_out = nullptr;   // [R, d]
  float* dec_norm = nullptr;  // [R, d]
  float* dec_ffn = nullptr;   // [R, f]
  float* logits = nullptr;    // [R, V]   [kDecodeOutput, kDecodeSearch]

  // Converted operands of int8 / f16 Linears (empty for f32 ones): inputs
  // up to max(d, f) wide. The encoder's serve Ns rows and outputs up to
  // max(3d, f) wide [kAttnQkv, kCrossKv]; the decoder's R rows and
  // max(3d, f, V) [kDecodeLayers, kDecodeOutput].
  LinearScratch enc_linear_scratch;
  LinearScratch dec_linear_scratch;
  // The output head's own scratch (its weights' OutputHead::plan).
  OutputHead::Scratch head_scratch;

  // Attention probabilities, one slice per worker (parallel_for slot): the
  // encoder's hold a [len, len] score block [kAttnContext], the decoder's one
  // row of at most max(len_source, T) keys [kDecodeLayers].
  float* enc_attention_scratch = nullptr;  // [workers, enc_scratch_stride]
  float* dec_attention_scratch = nullptr;  // [workers, dec_scratch_stride]
  size_t enc_scratch_stride = 0;
  size_t dec_scratch_stride = 0;
  size_t max_target_len = 0;  // T: positions per cache row
  // The next free row of the self-attention caches (below): rows are handed
  // out in the order steps write them, from row 0 at each decode's first step.
  size_t next_cache_row = 0;

  // Cross-attention weights on request (WorkspaceShape::attention; else
  // null): every head's probabilities of the chosen layer, then the row
  // the search keeps (that head's, or their mean). Row r's first n floats
  // (n its source's length) are meaningful.
  float* cross_weights_heads = nullptr;  // [R, heads, max_source_len]  kDecodeLayers
  float* cross_weights = nullptr;        // [R, max_source_len]  [kDecodeLayers, kDecodeSearch]
  size_t attention_layer = 0;            // the chosen decoder layer
  int attention_head = -1;               // the chosen head, or -1 for the mean
  size_t max_source_len = 0;             // the stride of both
};

// Lays the workspace out in `arena` (measuring or real).
void plan_workspace(const WorkspaceShape& shape, Arena* arena, Workspace* workspace);

}  // namespace edgemt::transformer
