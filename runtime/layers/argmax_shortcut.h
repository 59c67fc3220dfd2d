// ArgmaxShortcut: the arg-max of y = x · Wᵀ + b over a matrix on the own f32
// GEMM (layers/packed_f32_linear.h) without computing every y, for greedy
// search when no score is reported (Translator::set_greedy_scores). At batch
// 1 an f32 decoder reads every weight once per token and the output
// projection is its largest matrix (8000 x 256 floats of the 19 MB the
// multi30k en->de decoder reads per step); greedy keeps only its arg-max.
//
//   1. An int8 copy of W (per-row symmetric codes q[n, k] and scale s[n],
//      kernels/int8_gemm.h) and x quantized per row as the int8 GEMM does
//      (codes p[k], scale t) give A[n] = float(Σ p·q)·(t·s[n]) + b[n]: a
//      quarter of the bytes.
//   2. Every y[n] the f32 GEMM computes lies within B[n] of A[n] (below), so
//      id n can be the arg-max only if A[n] + B[n] >= max_m (A[m] - B[m])
//      over the ids that may be chosen.
//   3. Those candidates (1-2 on average on real models; tools/research/
//      edgemt-argmax-study measures it) get their exact y from the f32 GEMM
//      kernel, one block of 16 columns each, the same bits as the full
//      product; the best of them, ties to the lower id, is the arg-max.
//
// The bound. With x = t·p + e and w[n] = s[n]·q[n] + d[n] (the two
// quantizations' errors), in real arithmetic
//   Σ x·w - Σ (t·p)·(s·q) = Σ (t·p)·d + Σ e·w,
// so |Σ x·w - (A[n] - b[n])| <= D[n]·‖t·p‖₁ + E·‖w[n]‖₁, with D[n] = max_k
// |d[n, k]| (kept per row at load) and E = max_k |e[k]| (per row of x). A
// float32 sum of b and K products in any order is within
// γ(K+1)·(|b| + Σ|x|·|w|) of the real value (γ(n) = n·u / (1 - n·u), u =
// 2^-24; Higham, Accuracy and Stability of Numerical Algorithms, 3.1), and
// Σ|x|·|w| <= ‖x‖∞·‖w[n]‖₁. The int8 epilogue's three roundings (and the
// int32 -> float one) move A by at most 4u·(|A| + |b|). So
//   B[n] = (D[n]·‖t·p‖₁ + ‖w[n]‖₁·(E + γ·‖x‖∞) + |b[n]|·(γ + 4u) + |A[n]|·4u)
//          · (1 + 2^-10),
// the last factor covering the rounding of B's own float arithmetic (each
// term non-negative, a few u in all). Rounding to nearest is monotone, so
// y[n] <= A + B and y[m] >= A - B survive the float sums: the true arg-max
// is always among the candidates.
//
// Exactness beyond the arg-max: when every A and B of a row is finite (and
// the partial sums cannot overflow, checked from ‖x‖∞), every y of the row
// is finite, so its log-sum-exp is too and the full search would not have
// failed the sentence either. Otherwise (x with NaN or inf, a bound that
// overflows, no id left) pick() says so and the caller computes the full
// row: the same result and the same errors as without the shortcut.
//
// A lexical shortlist (select()): the batch's candidate columns of the int8
// copy and of the bound's constants are gathered once per batch, and pick()
// works on them alone, with their f32 pack (the caller's gather of the same
// floats) for the exact values. At batch 32 a shortlist keeps thousands of
// columns, and the f32 product over them was most of a greedy step. When
// every step has a selection (set_rows), the int8 copy is kept as rows: a
// pack spreads one column's codes over every 64-byte line of its block of
// 16, so gathering ~600 candidates read ~2.4 MB (4% of a tiny11-shaped int8
// sentence at batch 1); rows give each candidate's codes in 4 lines.
//
// Load phase: create() reads W's rows (from the f32 pack, or in place when
// the matrix has none: layers/unpacked_f32_linear.h) and builds the int8
// pack and three floats per row: N·(K + 28) bytes (2.0 MiB for the 8000 x
// 256 projection). Run phase: select() and pick() allocate nothing; they use
// the caller's storage and scratch. Not thread-safe per instance; the same
// answer for any thread count.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/parallel.h"
#include "edgemt/status.h"
#include "kernels/argmax_bounds.h"
#include "kernels/f32_gemm.h"
#include "layers/int8_linear.h"
#include "layers/linear_scratch.h"
#include "layers/packed_matrix.h"
#include "layers/unpacked_f32_linear.h"

namespace edgemt {

// Per-row constants of the bound (one block: [3, N] floats), each rounded up.
struct ArgmaxRowBounds {
  const float* max_error = nullptr;  // [N] D[n] = max_k |w[n, k] - s[n]·q[n, k]|
  const float* l1 = nullptr;         // [N] ‖w[n]‖₁
  const float* abs_bias = nullptr;   // [N] |b[n]|
};

class ArgmaxShortcut {
 public:
  // best[r] of a row whose arg-max pick() could not prove.
  static constexpr size_t kNoPick = SIZE_MAX;

  // Load phase: the int8 copy of `exact` (the f32 pack, which must outlive
  // this object: pick() reads its candidate blocks) and the bound's
  // constants; `kernel` is the f32 GEMM kernel that computes the full
  // product (the candidates' exact values come from it). Errors:
  // kOutOfMemory; kInvalidArgument for a pack with non-finite weights.
  [[nodiscard]] Status create(const kernels::f32::PackedWeights& exact,
                              kernels::f32::GemmKernel kernel);
  // The same over a matrix without a pack (its rows, e.g. in the model
  // file, must outlive this object): pick() packs each candidate's block of
  // 16 rows into its block scratch, the same floats as the pack's.
  [[nodiscard]] Status create(const UnpackedF32Linear& exact);

  bool empty() const { return approx_.out_features() == 0; }
  size_t bytes() const { return approx_.packed_bytes() + bounds_.bytes(); }
  size_t in_features() const { return depth_; }
  size_t out_features() const { return columns_; }
  // Load phase: row n of W [K] (create() reads each row through it): in
  // place for rows read in place, else unpacked into `buffer` [K]; and the
  // release of the rows [end - chunk, end) it has just finished reading in
  // place (UnpackedF32Linear::release_rows; nothing for a pack).
  const float* exact_row(size_t n, float* buffer) const;
  void release_rows_to(size_t end) const;

  // Bytes select() needs for `count` columns: their int8 copy (a pack of
  // its own) and their bound constants.
  size_t selection_bytes(size_t count) const;
  // Run phase, once per batch: pick() works on columns ids[0..count) of W
  // only (ascending, each < N; the array must stay valid meanwhile): its N
  // is `count` and best[r] a position in ids. `exact`: those columns' f32
  // pack (kernels/column_gather.h: the floats of W's), valid meanwhile too;
  // `storage`: selection_bytes(count) bytes, 64-byte aligned. ids nullptr:
  // the whole matrix again.
  void select(const int32_t* ids, size_t count, const kernels::f32::PackedWeights* exact,
              void* storage);
  bool selected() const { return selected_ids_ != nullptr; }
  // Load phase: the int8 copy as rows (true) or as a pack (false, after
  // create()), the same codes rearranged in place. As rows, pick() needs a
  // selection (kFailedPrecondition without one) and select() packs the
  // candidates from their rows: the same pack as a gather. kOutOfMemory
  // (one block of scratch) leaves it as it was.
  [[nodiscard]] Status set_rows(bool rows);
  bool rows() const { return rows_form_; }

  // Run phase. x: [rows, K] (row stride K); approx: [rows, N] scratch;
  // scratch: an int8 LinearScratch for `rows` rows of depth K;
  // block_scratch: [parallel.workers, UnpackedF32Linear::scratch_floats(K)]
  // floats when created over unpacked rows (else may be nullptr). Writes
  // best[r]: the arg-max of x[r]·Wᵀ + b (the f32 GEMM's values) over the ids
  // not in banned[0..banned_count), the lowest id among equals; or kNoPick.
  // Rows run in parallel; with fewer rows than threads each row's passes are
  // cut into column ranges instead (pick_row_split). Same answer either way.
  // kFailedPrecondition: not created, or scratch too small.
  [[nodiscard]] Status pick(const float* x, size_t rows, const int32_t* banned,
                            size_t banned_count, float* approx, const LinearScratch& scratch,
                            float* block_scratch, const Parallel& parallel, size_t* best) const;

 private:
  // The bound's factors from one row of x (E, ‖t·p‖₁, ‖x‖∞ and γ):
  // B[n] = (D[n]·error + ‖w[n]‖₁·l1 + |b[n]|·bias + |A[n]|·approx)·(1 + 2^-10)
  // (kernels::argmax_bound).
  using RowFactors = kernels::ArgmaxBoundFactors;
  // The best exact value found so far among candidates, and its id.
  struct Candidate {
    size_t id = kNoPick;
    float y = 0.0f;
  };
  // Most column ranges one row's passes are cut into (pick_row_split).
  static constexpr size_t kMaxRanges = 16;

  Status build(size_t n_out, size_t depth);
  // The columns pick() works on (select()'s, or all) and their constants.
  size_t active_columns() const { return selected() ? selected_count_ : columns_; }
  const ArgmaxRowBounds& active_bounds() const {
    return selected() ? selected_bounds_ : bounds_.view();
  }
  // The column of banned id `id` among the active ones, or SIZE_MAX.
  size_t column_of(int32_t id) const;
  // false: no shortcut for this row (x not finite, or sums that could overflow).
  bool row_factors(const float* x, const int8_t* xq, float x_scale, RowFactors* out) const;
  float bound(const RowFactors& f, size_t n, float a) const;
  // Marks the banned ids of approx [N] NaN; false if one's A or B is not finite.
  bool ban(const RowFactors& f, const int32_t* banned, size_t banned_count, float* approx) const;
  // Pass 1 over ids [begin, end): approx[n] becomes A[n] + B[n]; returns
  // the largest A[n] - B[n] (-inf if none); *finite: no A or B is infinite.
  float upper_bounds(const RowFactors& f, size_t begin, size_t end, float* approx,
                     bool* finite) const;
  // Pass 2 over ids [begin, end) (begin at a 16-column block): every id whose
  // upper bound reaches `threshold` gets its exact value; *out keeps the
  // largest, the lowest id among equals.
  void best_candidate(const float* x, const float* upper, float threshold, size_t begin,
                      size_t end, float* block_scratch, Candidate* out) const;
  // One row on the calling thread (block_scratch: its own floats).
  size_t pick_row(const float* x, const int8_t* xq, float x_scale, const int32_t* banned,
                  size_t banned_count, float* approx, float* block_scratch) const;
  // One row, both passes cut into column ranges run over `parallel`
  // (block_scratch: every slot's); the same answer as pick_row.
  size_t pick_row_split(const float* x, const int8_t* xq, float x_scale, const int32_t* banned,
                        size_t banned_count, float* approx, float* block_scratch,
                        const Parallel& parallel) const;

  Int8Linear approx_;  // q, s and b (its codes as rows when rows_form_)
  bool rows_form_ = false;
  PackedMatrix<ArgmaxRowBounds> bounds_;
  kernels::f32::PackedWeights exact_{};  // blocks == nullptr: rows_ instead
  UnpackedF32Linear rows_;
  const float* bias_ = nullptr;  // [N] or nullptr (either's)
  kernels::f32::GemmKernel kernel_ = nullptr;
  size_t columns_ = 0;  // N
  size_t depth_ = 0;    // K
  float gamma_ = 0.0f;         // γ(K + 1), rounded up
  float max_l1_ = 0.0f;        // max_n ‖w[n]‖₁
  float max_abs_bias_ = 0.0f;  // max_n |b[n]|
  // select()'s columns: their ids, int8 copy, constants and f32 pack (the
  // matrix-wide maxima above bound them too).
  const int32_t* selected_ids_ = nullptr;
  size_t selected_count_ = 0;
  kernels::int8::PackedWeights selected_approx_{};
  ArgmaxRowBounds selected_bounds_;
  kernels::f32::PackedWeights selected_exact_{};
};

}  // namespace edgemt
