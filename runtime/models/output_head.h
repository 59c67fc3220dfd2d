// OutputHead: the output projection every family ends in, logits [R, V] =
// h [R, K] · Wᵀ + b, with what makes it cheap, the same for every family:
//   - an f32 matrix for the own f32 GEMM is read in place from the file
//     and packed only when a translator needs every logit without a
//     shortlist (finish_load);
//   - greedy decoding that reports no score takes the arg-max shortcut over
//     it (layers/argmax_shortcut.h: an int8 copy and a proven bound; run()
//     with `best`), so that most steps never read the f32 matrix;
//   - a matrix that is also an embedding table (a tied output) serves the
//     table's rows from its pack, so that it is resident once;
//   - a lexical shortlist restricts the logits to a batch's candidate ids
//     (select_columns): their columns are gathered once per batch into a
//     pack of their own (kernels/column_gather.h), so each step computes
//     only those, with the bits of the full product's same columns; greedy
//     without scores takes the arg-max shortcut over them too (their int8
//     copy gathered once per batch beside them).
// Load phase: load(), set_argmax_shortcut(), finish_load() (allocate).
// Plan: plan() requests its run-phase scratch. Run phase: run() (no
// allocation). Not thread-safe per instance: one Translator owns it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/arena.h"
#include "core/parallel.h"
#include "edgemt/model.h"
#include "edgemt/status.h"
#include "kernels/embedding.h"
#include "layers/argmax_shortcut.h"
#include "layers/linear.h"
#include "layers/linear_scratch.h"
#include "layers/unpacked_f32_linear.h"
#include "models/matrix_loader.h"

namespace edgemt {

class OutputHead {
 public:
  // The run-phase memory the head borrows besides the decoder's
  // LinearScratch (plan()).
  struct Scratch {
    LinearScratch argmax;     // the shortcut's quantized rows [R, K] (argmax_possible())
    float* blocks = nullptr;  // [workers, UnpackedF32Linear::scratch_floats(K)] (unpacked rows)
    void* selected = nullptr;       // the gathered pack of up to selected_capacity columns
    size_t selected_capacity = 0;   // 0: selections run the full product and keep their columns
    void* selected_argmax = nullptr;  // the shortcut's gather of as many (ArgmaxShortcut::select)
  };

  // `weight_name` [V, K] and `bias_name` [V] (nullptr: none) of `model`;
  // `tables` [table_count]: embedding tables that may share the matrix's
  // bytes (they then read their rows from its pack). Matrix bytes are
  // added to `loader`'s count (now, or when packed later).
  // Errors: as MatrixLoader::matrix.
  [[nodiscard]] Status load(const Model& model, MatrixLoader* loader, const char* weight_name,
                            const char* bias_name, kernels::EmbeddingTable* const* tables,
                            size_t table_count, size_t* matrix_bytes);

  // Builds (on) or frees (off) the arg-max shortcut where the projection is
  // on the own f32 GEMM; ok and nothing built otherwise. Load phase.
  [[nodiscard]] Status set_argmax_shortcut(bool on);
  // Packs the projection when it waits unpacked, no shortcut is built and
  // no shortlist is used (every logit is then needed). With a shortlist
  // (`shortlisted`) the f32 projection stays in the file: each batch
  // gathers its candidates' rows there (contiguous), where a pack would
  // cost a copy of the matrix and a gather reading one float per 64-byte
  // line; and the shortcut keeps its int8 copy as rows for the same
  // reason (ArgmaxShortcut::set_rows). Load phase, at every prepare().
  [[nodiscard]] Status finish_load(bool shortlisted);
  size_t shortcut_bytes() const { return shortcut_.bytes(); }
  // Every logit would come from the file's rows packed 64 at a time (an
  // unpacked f32 projection without a shortcut): a shortlist's selections
  // should then fit the gathered pack whatever their size.
  bool every_logit_slow() const {
    return !rows_.empty() && output_.out_features() == 0 && shortcut_.empty();
  }

  // The shortcut can be built (the projection is, or will be, on the own
  // f32 GEMM): plan() then reserves its scratch.
  bool argmax_possible() const { return output_.is_packed_f32() || !rows_.empty(); }
  size_t in_features() const { return in_; }
  size_t vocab() const { return vocab_; }
  // The projection as built (a Linear of the model's kind; empty while it
  // waits unpacked), for compute-path descriptions.
  const Linear& linear() const { return output_; }

  // Requests Scratch for up to `rows` rows on `workers` workers, live in
  // `lifetime` (the output step), from `arena`; with `selected_columns` > 0
  // also room to gather that many columns, live for the whole decode.
  void plan(size_t rows, size_t workers, Lifetime lifetime, size_t selected_columns, Arena* arena,
            Scratch* out) const;

  // Run phase, once per batch before its decode steps: from now on run()
  // and run_argmax() write logits [rows, count] for the vocabulary ids
  // ids[0..count) (ascending; the array must stay valid until the next
  // call), or [rows, V] again when ids is nullptr. A selection larger than
  // the scratch's room packs its rows of an unpacked f32 matrix per step,
  // 64 at a time; of a packed one (or one on XNNPACK) it computes every
  // logit and keeps the selected ones: the same values either way.
  void select_columns(const int32_t* ids, size_t count, const Scratch& scratch);
  size_t selected_count() const { return selected_ids_ != nullptr ? selected_count_ : vocab_; }

  // logits [rows, V] (or [rows, selected_count()]) of x [rows, K]; `linear`:
  // the decoder's LinearScratch (it serves the projection: K inputs, V
  // outputs).
  [[nodiscard]] Status run(const float* x, size_t rows, float* logits, const Parallel& parallel,
                           const LinearScratch& linear, const Scratch& scratch) const;
  // The same for greedy decoding without scores: best[r] is row r's
  // arg-max over the ids not in banned[0..banned_count) (the lowest id
  // among equals) and logits row r holds approximations; or
  // EncoderDecoder::kFullLogits when row r's exact logits were computed
  // instead (no shortcut, or one that could not prove its answer, or a
  // selection that did not fit the scratch's room). With a selection,
  // best[r] is a position in its ids, as a logits column is.
  [[nodiscard]] Status run_argmax(const float* x, size_t rows, const int32_t* banned,
                                  size_t banned_count, float* logits, size_t* best,
                                  const Parallel& parallel, const LinearScratch& linear,
                                  const Scratch& scratch) const;

 private:
  UnpackedF32Linear releasing_rows() const;
  // Packs an f32 projection that waits unpacked (nothing otherwise).
  Status pack();
  // Bytes a gathered pack of `columns` columns takes (0: this projection's
  // kind cannot be gathered).
  size_t selection_bytes(size_t columns) const;
  // Every logit [rows, V], whatever the selection.
  Status run_full(const float* x, size_t rows, float* logits, const Parallel& parallel,
                  const LinearScratch& linear, const Scratch& scratch) const;
  // The product restricted to the selection, as run() with one.
  Status run_selected(const float* x, size_t rows, float* logits, const Parallel& parallel,
                      const LinearScratch& linear, const Scratch& scratch) const;

  // A selection takes the shortcut from this depth on: per row and selected
  // column it costs an int8 multiply-add per weight and ~1 ns of bound
  // passes, the f32 product a float one per weight. Greedy, batch 32, 1
  // thread, cpu family 25: d 64 (the SSRU fixture) 7-10% slower per step
  // with it, d 256 (Multi30k with a shortlist; tiny11) 4-15% faster.
  static constexpr size_t kSelectedShortcutMinDepth = 128;
  // Whether a shortlist's selections take the shortcut: plan() gives them
  // its room and finish_load() keeps its copy as rows for them.
  bool selections_take_shortcut() const {
    return !shortcut_.empty() && in_ >= kSelectedShortcutMinDepth;
  }

  Linear output_;
  UnpackedF32Linear rows_;                 // an f32 projection not yet packed
  const TensorView* tensor_ = nullptr;     // its weight, for releasing file pages
  const Model* model_ = nullptr;
  kernels::EmbeddingTable* tables_[2] = {nullptr, nullptr};  // tied tables
  size_t* matrix_bytes_ = nullptr;
  ArgmaxShortcut shortcut_;                // empty unless set_argmax_shortcut(true)
  size_t in_ = 0;
  size_t vocab_ = 0;
  // The batch's selection (select_columns): its ids, and their pack when
  // gathered (selected_pack_), f32 or int8 as the projection.
  const int32_t* selected_ids_ = nullptr;
  size_t selected_count_ = 0;
  bool selected_pack_ = false;
  kernels::f32::PackedWeights selected_f32_;
  kernels::int8::PackedWeights selected_int8_;
};

}  // namespace edgemt
