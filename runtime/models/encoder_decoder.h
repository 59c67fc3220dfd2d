// EncoderDecoder: all the translator and the search know of a model family.
//
// A family (runtime/models/<family>/) turns a verified Model into an object
// with this interface at load, then runs in three phases:
//   plan     plan(shape, arena) requests every run-phase buffer the family
//            needs for the given limits, each with its lifetime in run steps
//            (below), from an Arena that measures, then binds (core/arena.h);
//            commit_plan() makes the bound buffers the ones used;
//   encode   encode() runs the source side of a packed batch once;
//   decode   decode_step() runs one step for the live hypotheses and leaves
//            their logits [rows, vocab] in logits(); reorder_state() moves a
//            sentence's per-hypothesis state when beams change parents.
// The translator packs and checks sources and owns the arena; the search
// (runtime/search/) picks tokens. Neither sees a family's weights, layers or
// buffers. runtime/models/families.cc registers the families.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/arena.h"
#include "core/parallel.h"
#include "edgemt/profile.h"
#include "edgemt/status.h"

namespace edgemt {

// Sources packed without padding: sequence s occupies rows
// [offsets[s], offsets[s+1]) of every [Ns, ·] buffer.
struct PackedSequences {
  size_t count = 0;
  const size_t* offsets = nullptr;  // [count + 1]; offsets[count] = total rows Ns
};

// The steps of one translate() call, in order, which buffer lifetimes are
// made of: packing (translator), the encoder's steps, then the decode
// steps, which repeat once per output token. The encoder's steps are the
// family's own list (its workspace.h: encoder_step(0), encoder_step(1),
// ...; step 0 reads the packed ids), as many as it needs: a step is its
// phase in the high byte and its index in the phase in the low byte, so
// every encoder step sorts after kPack and before the decode steps.
namespace run_step {
inline constexpr uint16_t kPack = 0x000;          // sources checked and packed (translator)
inline constexpr uint16_t kEncodePhase = 0x100;   // + the family's encoder step index
inline constexpr uint16_t kDecodeLayers = 0x200;  // the decoder up to its last hidden state
inline constexpr uint16_t kDecodeOutput = 0x201;  // output projection to logits
inline constexpr uint16_t kDecodeSearch = 0x202;  // the search reads the logits, picks tokens
}  // namespace run_step

// Step `index` of a family's encoder (0..255).
constexpr uint16_t encoder_step(uint8_t index) { return run_step::kEncodePhase + index; }

// Live from the first decoder step to the end of the search.
inline constexpr Lifetime kWholeDecode{run_step::kDecodeLayers, run_step::kDecodeSearch};

// Limits one plan is made for.
struct RunShape {
  size_t source_rows = 0;     // Ns = max_batch · max_source_len packed source rows
  size_t max_source_len = 0;  // longest single source
  size_t rows = 0;            // R = max_batch · max_beam hypothesis rows
  size_t max_beam = 1;        // hypotheses per sentence (state slots per sentence)
  size_t max_target_len = 0;  // T
  size_t workers = 1;         // parallel_for slots (per-worker scratch)
  // A lexical shortlist's candidates (select_output_columns): room to
  // gather up to this many output columns once per batch (0: none; larger
  // selections still work, computing every logit).
  size_t output_columns = 0;
  // Attention weights on request (Limits::attention): which layer and head
  // (-1: the last layer; the mean over heads), checked by
  // check_attention_choice() before planning.
  bool attention = false;
  int attention_layer = -1;
  int attention_head = -1;
};

// How a call runs: threads, and the profile to add to (nullptr: none).
struct Execution {
  Parallel parallel;
  Profile* profile = nullptr;
};

// One incremental decoder step for R live hypotheses. Row r belongs to
// source sequence row_source[r]; its state (a K/V cache, a recurrent state)
// lives in slot row_slot[r]; sentence s owns slots [s·beam, s·beam + beam).
struct DecoderStep {
  size_t rows = 0;                     // R
  size_t step = 0;                     // position of the input tokens
  const int32_t* tokens = nullptr;     // [R] input token per hypothesis
  const size_t* row_source = nullptr;  // [R] source sequence of each hypothesis
  const size_t* row_slot = nullptr;    // [R] state slot of each hypothesis
  bool attention = false;              // the search keeps this step's attention_weights()
};

class EncoderDecoder {
 public:
  virtual ~EncoderDecoder() = default;

  // Requests the family's run-phase buffers from `arena` (measuring or
  // bound) into a pending set; the buffers in use change only at commit.
  virtual void plan(const RunShape& shape, Arena* arena) = 0;
  virtual void commit_plan() = 0;

  // ids: packed source ids [Ns], every one inside the vocabulary.
  [[nodiscard]] virtual Status encode(const Execution& execution, const int32_t* ids,
                                      const PackedSequences& sources) = 0;
  // Runs one step; on success logits() holds [step.rows, vocab], which the
  // search may overwrite in place (log-softmax) until the next step.
  [[nodiscard]] virtual Status decode_step(const Execution& execution,
                                           const PackedSequences& sources,
                                           const DecoderStep& step) = 0;
  virtual float* logits() = 0;
  // Run phase, once per batch between encode() and its first decode step:
  // the steps then leave logits [rows, count] for the vocabulary ids
  // ids[0..count) only (ascending; valid until the next call), with the
  // values the full row has at those ids; nullptr: every id again.
  virtual void select_output_columns(const int32_t* ids, size_t count) = 0;

  // Greedy search that reports no score (Translator::set_greedy_scores):
  // the same step as decode_step(), but a family with an arg-max shortcut
  // (layers/argmax_shortcut.h, built by set_argmax_shortcut) may find each
  // row's arg-max without every logit. Writes best[r]: the arg-max of row
  // r's logits over the ids not in banned[0..banned_count), the lowest id
  // among equals, with every logit of the row finite; or kFullLogits when
  // it computed row r's logits into logits() instead, as decode_step()
  // does (no shortcut, or one that could not prove its answer).
  static constexpr size_t kFullLogits = SIZE_MAX;
  [[nodiscard]] virtual Status decode_step_argmax(const Execution& execution,
                                                  const PackedSequences& sources,
                                                  const DecoderStep& step, const int32_t* banned,
                                                  size_t banned_count, size_t* best) {
    (void)banned;
    (void)banned_count;
    for (size_t r = 0; r < step.rows; ++r) best[r] = kFullLogits;
    return decode_step(execution, sources, step);
  }
  // Load phase: builds (on) or frees (off) the shortcut decode_step_argmax
  // uses, where the family has one for this model; ok and nothing built
  // otherwise. Errors: kOutOfMemory.
  [[nodiscard]] virtual Status set_argmax_shortcut(bool /*on*/) { return Status::ok(); }
  // Load phase, at every Translator::prepare() before planning: builds what
  // the family deferred until it knows whether the shortcut and a shortlist
  // (`shortlisted`) are used (the f32 output projection's pack).
  // Errors: kOutOfMemory.
  [[nodiscard]] virtual Status finish_load(bool /*shortlisted*/) { return Status::ok(); }
  // Whether computing every logit is slow (an f32 output projection read
  // from the file's rows at each step), so that a shortlist's selections
  // must all fit the gathered pack (Translator plans it so).
  virtual bool every_logit_slow() const { return false; }
  // Bytes the shortcut holds (0: none built).
  virtual size_t argmax_shortcut_bytes() const { return 0; }
  // The attention weights of the last decode_step: row r's first n entries
  // (n its source's length) at `*stride` floats apart, or nullptr when the
  // family does not provide them.
  virtual const float* attention_weights(size_t* stride) const {
    *stride = 0;
    return nullptr;
  }
  // Whether the family provides the attention weights of decoder `layer`
  // and `head` (RunShape::attention_layer/head; -1 the defaults):
  // kUnsupported when it has none, kInvalidArgument naming its range.
  [[nodiscard]] virtual Status check_attention_choice(int /*layer*/, int /*head*/) const {
    return Status::error(StatusCode::kUnsupported, "it does not provide attention weights");
  }

  // Beam reordering inside one sentence's slots [first_slot, first_slot + K):
  // new slot first_slot + j takes the state of old slot first_slot +
  // parent[j] for positions 0..positions-1 (j < new_count, parent[j] <
  // old_count).
  virtual void reorder_state(const Execution& execution, size_t first_slot, size_t old_count,
                             const size_t* parent, size_t new_count, size_t positions) = 0;

  // What runs the matrix products, for Translator::compute_path().
  virtual void describe_compute_path(char* out, size_t size) const = 0;
};

}  // namespace edgemt
