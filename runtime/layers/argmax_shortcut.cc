#include "layers/argmax_shortcut.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "kernels/column_gather.h"
#include "kernels/portable_vectors.h"
#include "kernels/row_codes.h"

namespace edgemt {

namespace f32 = kernels::f32;
namespace q8 = kernels::int8;
using kernels::any_lane;
using kernels::Floats4;
using kernels::load_floats4;

namespace {

constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24, float32
constexpr float kWidening = 1.0f + 1.0f / 1024.0f;
// Rows read in place are released in chunks of this many (4 MiB at K = 1024).
constexpr size_t kReleaseRows = 1024;
// Time of the two passes over one id (bounds, then the candidate scan):
// ~1 ns together, scalar code.
constexpr size_t kPassNanosecondsPerId = 1;

// `bytes` rounded up to whole 64-byte lines.
size_t whole_lines(size_t bytes) { return (bytes + 63) / 64 * 64; }

// The float nearest `value` from above (bounds only ever round up).
float round_up(double value) {
  float f = static_cast<float>(value);
  if (static_cast<double>(f) < value) f = std::nextafter(f, INFINITY);
  return f;
}

// Makes the int8 copy's rows on demand for the int8 packer
// (kernels::int8::RowSource), reading each row of the exact matrix once:
// its scale, codes and D[n], ‖w[n]‖₁ and |b[n]| on the way. A non-finite
// weight or bias is noted (the first such row) and its row made zero; the
// caller then refuses the matrix.
struct RowQuantizer {
  const ArgmaxShortcut* shortcut;
  const float* bias;  // [N] or nullptr
  float* max_error;   // [N] D[n], written here
  float* l1;          // [N] ‖w[n]‖₁, written here
  float* abs_bias;    // [N] |b[n]|, written here
  float* row;         // [K] one row
  float max_l1 = 0.0f;
  float max_abs_bias = 0.0f;
  size_t non_finite = SIZE_MAX;

  static void quantize(void* context, size_t first, size_t count, int8_t* out, float* scale) {
    RowQuantizer& q = *static_cast<RowQuantizer*>(context);
    const size_t depth = q.shortcut->in_features();
    for (size_t i = 0; i < count; ++i) {
      const size_t n = first + i;
      const float* row = q.shortcut->exact_row(n, q.row);
      const float b = q.bias != nullptr ? q.bias[n] : 0.0f;
      float largest = 0.0f;
      double sum = 0.0;
      kernels::row_magnitudes(row, depth, &largest, &sum);
      int8_t* codes = out + i * depth;
      if (!std::isfinite(sum) || !std::isfinite(b)) {
        if (q.non_finite == SIZE_MAX) q.non_finite = n;
        scale[i] = 0.0f;
        std::memset(codes, 0, depth);
        q.max_error[n] = q.l1[n] = q.abs_bias[n] = 0.0f;
        continue;
      }
      // Codes at scale s, as the converter quantizes (any rounding would
      // do: D[n] is measured from the codes kept). A row so small that
      // 1 / s overflows gets zero codes: D[n] is then its largest weight.
      const float s = largest / 127.0f;
      const float reciprocal = s > 0.0f ? 1.0f / s : 0.0f;
      const float inverse = std::isfinite(reciprocal) ? reciprocal : 0.0f;
      const double error = kernels::quantize_row(row, depth, s, inverse, codes);
      scale[i] = s;
      q.max_error[n] = round_up(error);
      q.l1[n] = round_up(sum * (1.0 + 2.0 * static_cast<double>(depth) * 1e-16));  // sum's own rounding
      q.abs_bias[n] = std::fabs(b);
      q.max_l1 = std::fmax(q.max_l1, q.l1[n]);
      q.max_abs_bias = std::fmax(q.max_abs_bias, q.abs_bias[n]);
      if ((n + 1) % kReleaseRows == 0 || n + 1 == q.shortcut->out_features()) {
        q.shortcut->release_rows_to(n + 1);
      }
    }
  }
};

}  // namespace

Status ArgmaxShortcut::create(const f32::PackedWeights& exact, f32::GemmKernel kernel) {
  ArgmaxShortcut made;
  made.exact_ = exact;
  made.kernel_ = kernel;
  made.bias_ = exact.bias;
  EDGEMT_RETURN_IF_ERROR(made.build(exact.columns, exact.depth));
  *this = std::move(made);
  return Status::ok();
}

Status ArgmaxShortcut::create(const UnpackedF32Linear& exact) {
  if (exact.empty()) {
    return Status::error(StatusCode::kInvalidArgument, "arg-max shortcut of an empty matrix");
  }
  ArgmaxShortcut made;
  made.rows_ = exact;
  made.kernel_ = exact.kernel();
  made.bias_ = exact.bias();
  EDGEMT_RETURN_IF_ERROR(made.build(exact.out_features(), exact.in_features()));
  *this = std::move(made);
  return Status::ok();
}

const float* ArgmaxShortcut::exact_row(size_t n, float* buffer) const {
  if (exact_.blocks == nullptr) return rows_.weight() + n * rows_.in_features();  // in place
  f32::unpack_row(exact_, n, buffer);
  return buffer;
}

void ArgmaxShortcut::release_rows_to(size_t end) const {
  if (exact_.blocks != nullptr) return;  // a pack: nothing read in place
  const size_t first = end - ((end - 1) % kReleaseRows + 1);
  rows_.release_rows(first, end - first);
}

Status ArgmaxShortcut::build(size_t n_out, size_t depth) {
  columns_ = n_out;
  depth_ = depth;
  std::unique_ptr<float[]> row(new (std::nothrow) float[depth]);
  std::unique_ptr<float[]> scale(new (std::nothrow) float[n_out]);
  PackedMatrix<ArgmaxRowBounds> bounds;
  if (!row || !scale || !bounds.allocate(3 * n_out * sizeof(float))) {
    return Status::error(StatusCode::kOutOfMemory,
                         "cannot allocate the int8 copy of a %zux%zu output projection", n_out, depth);
  }
  float* max_error = static_cast<float*>(bounds.data());
  float* l1 = max_error + n_out;
  float* abs_bias = l1 + n_out;
  RowQuantizer quantizer{this, bias_, max_error, l1, abs_bias, row.get()};
  Int8Linear approx;
  // Full activation codes: their rounding error enters the bound, and
  // narrow ones would let more candidates through (int8_gemm.h).
  EDGEMT_RETURN_IF_ERROR(approx.create_from_rows(&RowQuantizer::quantize, &quantizer, scale.get(),
                                                 bias_, depth, n_out, false,
                                                 kernels::int8::kFullCodes));
  if (quantizer.non_finite != SIZE_MAX) {
    return Status::error(StatusCode::kInvalidArgument,
                         "output projection row %zu has a non-finite weight or bias", quantizer.non_finite);
  }
  ArgmaxRowBounds* view = bounds.mutable_view();
  view->max_error = max_error;
  view->l1 = l1;
  view->abs_bias = abs_bias;
  approx_ = std::move(approx);
  bounds_ = std::move(bounds);
  const double terms = static_cast<double>(depth + 1) * kUnitRoundoff;
  gamma_ = round_up(terms / (1.0 - terms));
  max_l1_ = quantizer.max_l1;
  max_abs_bias_ = quantizer.max_abs_bias;
  return Status::ok();
}

// select()'s storage: the int8 pack, then the three constants' [count]
// arrays, each at a 64-byte boundary; then the candidates' scales and
// biases [count] and 16 rows of codes for the packer, which a copy kept as
// rows uses (the room does not depend on set_rows, planned or not yet).
size_t ArgmaxShortcut::selection_bytes(size_t count) const {
  return whole_lines(q8::packed_bytes(count, depth_)) + 5 * whole_lines(count * sizeof(float)) +
         whole_lines(q8::kBlockColumns * depth_);
}

Status ArgmaxShortcut::set_rows(bool rows) {
  if (rows == rows_form_ || empty()) return Status::ok();
  const q8::PackedWeights& packed = approx_.packed();
  std::unique_ptr<int8_t[]> scratch(new (std::nothrow) int8_t[packed.groups * q8::kGroupBytes]);
  if (!scratch) {
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate a block of the arg-max shortcut");
  }
  if (rows) {
    q8::pack_codes_to_rows(approx_.mutable_codes(), packed.block_count, packed.groups, scratch.get());
  } else {
    q8::rows_to_pack_codes(approx_.mutable_codes(), packed.block_count, packed.groups, scratch.get());
  }
  rows_form_ = rows;
  return Status::ok();
}

namespace {

// Rows ids[first..] of an int8 copy kept as rows (row n at n·stride), for
// the int8 packer (kernels::int8::RowSource): their codes and scales.
struct SelectedRows {
  const int8_t* codes;
  size_t stride;  // padded depth
  size_t depth;
  const int32_t* ids;
  const float* scale;  // [N]

  static void copy(void* context, size_t first, size_t count, int8_t* out, float* scale) {
    const SelectedRows& s = *static_cast<const SelectedRows*>(context);
    for (size_t i = 0; i < count; ++i) {
      const size_t n = static_cast<size_t>(s.ids[first + i]);
      std::memcpy(out + i * s.depth, s.codes + n * s.stride, s.depth);
      scale[i] = s.scale[n];
    }
  }
};

}  // namespace

void ArgmaxShortcut::select(const int32_t* ids, size_t count, const f32::PackedWeights* exact,
                            void* storage) {
  selected_ids_ = nullptr;
  selected_count_ = 0;
  if (ids == nullptr || exact == nullptr || storage == nullptr || empty()) return;
  const size_t floats = whole_lines(count * sizeof(float)) / sizeof(float);
  float* constants = reinterpret_cast<float*>(static_cast<uint8_t*>(storage) +
                                              whole_lines(q8::packed_bytes(count, depth_)));
  float* max_error = constants;
  float* l1 = constants + floats;
  float* abs_bias = constants + 2 * floats;
  const q8::PackedWeights& all_approx = approx_.packed();
  q8::PackedWeights gathered;
  if (rows_form_) {
    // The candidates' rows packed: the codes, scales, biases and column
    // sums a gather from the pack would give.
    float* scale = constants + 3 * floats;
    float* bias = constants + 4 * floats;
    int8_t* rows = reinterpret_cast<int8_t*>(constants + 5 * floats);
    for (size_t j = 0; j < count; ++j) bias[j] = all_approx.bias[ids[j]];
    SelectedRows source{all_approx.blocks, all_approx.groups * q8::kGroupDepth, depth_, ids,
                        all_approx.scale};
    if (!q8::pack_weights_from(&SelectedRows::copy, &source, scale, bias, count, depth_, rows,
                               storage, &gathered)) {
      return;  // a -128 code, which the copy never holds: no selection
    }
  } else {
    kernels::gather_columns(all_approx, ids, count, storage, &gathered);
  }
  const ArgmaxRowBounds& all = bounds_.view();
  for (size_t j = 0; j < count; ++j) {
    const size_t n = static_cast<size_t>(ids[j]);
    max_error[j] = all.max_error[n];
    l1[j] = all.l1[n];
    abs_bias[j] = all.abs_bias[n];
  }
  selected_approx_ = gathered;
  selected_bounds_.max_error = max_error;
  selected_bounds_.l1 = l1;
  selected_bounds_.abs_bias = abs_bias;
  selected_exact_ = *exact;
  selected_ids_ = ids;
  selected_count_ = count;
}

size_t ArgmaxShortcut::column_of(int32_t id) const {
  if (id < 0) return SIZE_MAX;
  if (!selected()) return static_cast<size_t>(id) < columns_ ? static_cast<size_t>(id) : SIZE_MAX;
  const int32_t* end = selected_ids_ + selected_count_;
  const int32_t* at = std::lower_bound(selected_ids_, end, id);
  return at != end && *at == id ? static_cast<size_t>(at - selected_ids_) : SIZE_MAX;
}

Status ArgmaxShortcut::pick(const float* x, size_t rows, const int32_t* banned,
                            size_t banned_count, float* approx, const LinearScratch& scratch,
                            float* block_scratch, const Parallel& parallel, size_t* best) const {
  if (rows == 0) return Status::ok();
  if (empty()) {
    return Status::error(StatusCode::kFailedPrecondition, "arg-max shortcut used before create()");
  }
  if (exact_.blocks == nullptr && block_scratch == nullptr) {
    return Status::error(StatusCode::kFailedPrecondition,
                         "arg-max shortcut over unpacked rows needs block scratch");
  }
  if (rows_form_ && !selected()) {
    return Status::error(StatusCode::kFailedPrecondition,
                         "arg-max shortcut kept as rows used without a selection");
  }
  // A [rows, N]; the scratch keeps each row's codes p and scale t.
  if (selected()) {
    EDGEMT_RETURN_IF_ERROR(approx_.run_columns(x, rows, approx, parallel, scratch, selected_approx_));
  } else {
    EDGEMT_RETURN_IF_ERROR(approx_.run(x, rows, approx, parallel, scratch));
  }
  const size_t depth = depth_;
  const size_t n_out = active_columns();
  const size_t stride = q8::padded_depth(depth);
  const size_t slot_floats = UnpackedF32Linear::scratch_floats(depth);
  if (rows < parallel.workers && parallel.worth(n_out * kPassNanosecondsPerId)) {
    // Fewer rows than threads (batch-1 decoding): each row's two passes are
    // cut into column ranges instead, or the other threads would idle
    // through a quarter of an f32 decoder step's time.
    for (size_t r = 0; r < rows; ++r) {
      best[r] = pick_row_split(x + r * depth, scratch.quantized + r * stride, scratch.row_scale[r],
                               banned, banned_count, approx + r * n_out, block_scratch, parallel);
    }
    return Status::ok();
  }
  auto task = [&](size_t r, size_t slot) {
    float* own = block_scratch != nullptr ? block_scratch + slot * slot_floats : nullptr;
    best[r] = pick_row(x + r * depth, scratch.quantized + r * stride, scratch.row_scale[r], banned,
                       banned_count, approx + r * n_out, own);
  };
  parallel_for(parallel, rows, n_out * kPassNanosecondsPerId, task);
  return Status::ok();
}

bool ArgmaxShortcut::row_factors(const float* x, const int8_t* xq, float x_scale,
                                 RowFactors* out) const {
  const size_t depth = depth_;
  // A NaN or inf in x gives a NaN scale (kernels/int8_gemm.h).
  if (!std::isfinite(x_scale)) return false;
  double quantized_l1 = 0.0;  // ‖t·p‖₁
  double x_error = 0.0;       // E = max |x - t·p|
  double x_max = 0.0;         // ‖x‖∞
  for (size_t k = 0; k < depth; ++k) {
    const double tp = static_cast<double>(x_scale) * xq[k];  // exact in double
    quantized_l1 += std::fabs(tp);
    const double miss = std::fabs(static_cast<double>(x[k]) - tp);
    const double magnitude = std::fabs(static_cast<double>(x[k]));
    x_error = miss > x_error ? miss : x_error;  // x is finite here (its scale is)
    x_max = magnitude > x_max ? magnitude : x_max;
  }
  // The f32 sums' partial sums stay below |b| + ‖x‖∞·‖w‖₁ (times 1 + γ):
  // far from overflow, or no shortcut.
  if (x_max * static_cast<double>(max_l1_) + static_cast<double>(max_abs_bias_) >
      static_cast<double>(FLT_MAX) / 4) {
    return false;
  }
  out->error = round_up(quantized_l1 * (1.0 + 1e-12));
  out->l1 = round_up((x_error + static_cast<double>(gamma_) * x_max) * (1.0 + 1e-12));
  out->bias = round_up(static_cast<double>(gamma_) + 4.0 * kUnitRoundoff);
  out->approx = round_up(4.0 * kUnitRoundoff);
  return true;
}

float ArgmaxShortcut::bound(const RowFactors& f, size_t n, float a) const {
  const ArgmaxRowBounds& k = active_bounds();
  return kernels::argmax_bound(k.max_error[n], k.l1[n], k.abs_bias[n], f, kWidening, a);
}

bool ArgmaxShortcut::ban(const RowFactors& f, const int32_t* banned, size_t banned_count,
                         float* approx) const {
  // Banned ids: their logits count for the log-sum-exp (so they must be
  // finite too), never for the arg-max: marked NaN, which no comparison
  // below takes.
  for (size_t i = 0; i < banned_count; ++i) {
    const size_t n = column_of(banned[i]);
    if (n == SIZE_MAX) continue;
    float& a = approx[n];
    if (std::isnan(a)) continue;  // listed twice
    if (!std::isfinite(a) || !std::isfinite(bound(f, n, a))) return false;
    a = NAN;
  }
  return true;
}

float ArgmaxShortcut::upper_bounds(const RowFactors& f, size_t begin, size_t end, float* approx,
                                   bool* finite) const {
  // kernels/argmax_bounds.h: the same operations in the same order as
  // bound(), so the same bits, on as many ids at a time as the CPU has lanes.
  const ArgmaxRowBounds& k = active_bounds();
  bool infinite = false;
  const float threshold =
      kernels::argmax_upper_bounds(k.max_error + begin, k.l1 + begin, k.abs_bias + begin, f,
                                   kWidening, end - begin, approx + begin, &infinite);
  *finite = !infinite;
  return threshold;
}

void ArgmaxShortcut::best_candidate(const float* x, const float* upper, float threshold,
                                    size_t begin, size_t end, float* block_scratch,
                                    Candidate* out) const {
  const size_t depth = depth_;
  const size_t n_out = active_columns();
  const f32::PackedWeights& exact = selected() ? selected_exact_ : exact_;
  float block_y[f32::kBlockColumns];
  size_t block = SIZE_MAX;
  const Floats4 threshold4 = Floats4{} + threshold;
  for (size_t n = begin; n < end; ++n) {
    // Most ids are not candidates: four at a time skip past them.
    while (n % 4 == 0 && n + 4 <= end) {
      if (any_lane(load_floats4(upper + n) >= threshold4)) break;
      n += 4;
    }
    if (n >= end) break;
    if (!(upper[n] >= threshold)) continue;
    if (n / f32::kBlockColumns != block) {
      block = n / f32::kBlockColumns;
      f32::PackedWeights one;
      if (exact.blocks != nullptr) {
        one.blocks = exact.blocks + block * depth * f32::kBlockColumns;
        one.bias = exact.bias != nullptr ? exact.bias + block * f32::kBlockColumns : nullptr;
        one.columns = n_out - block * f32::kBlockColumns < f32::kBlockColumns
                          ? n_out - block * f32::kBlockColumns
                          : f32::kBlockColumns;
        one.depth = depth;
        one.block_count = 1;
        one.tiny = exact.tiny;
      } else {
        rows_.pack_blocks(block, 1, block_scratch, &one);  // the same floats
      }
      f32::GemmArgs args;
      args.x = x;
      args.x_stride = depth;
      args.rows = 1;
      args.weights = &one;
      args.y = block_y;
      args.y_stride = f32::kBlockColumns;
      kernel_(args, 0, 1);
    }
    const float y = block_y[n % f32::kBlockColumns];
    if (out->id == kNoPick || y > out->y) {
      out->id = n;
      out->y = y;
    }
  }
}

size_t ArgmaxShortcut::pick_row(const float* x, const int8_t* xq, float x_scale,
                                const int32_t* banned, size_t banned_count, float* approx,
                                float* block_scratch) const {
  RowFactors factors;
  if (!row_factors(x, xq, x_scale, &factors) || !ban(factors, banned, banned_count, approx)) {
    return kNoPick;
  }
  // Pass 1: each id's upper bound replaces its A; the best lower bound.
  bool finite = true;
  const float threshold = upper_bounds(factors, 0, active_columns(), approx, &finite);
  if (!finite || !(threshold > -INFINITY)) return kNoPick;
  // Pass 2: the candidates' exact values, one block of 16 columns at a time.
  Candidate best;
  best_candidate(x, approx, threshold, 0, active_columns(), block_scratch, &best);
  return best.id;
}

size_t ArgmaxShortcut::pick_row_split(const float* x, const int8_t* xq, float x_scale,
                                      const int32_t* banned, size_t banned_count, float* approx,
                                      float* block_scratch, const Parallel& parallel) const {
  RowFactors factors;
  if (!row_factors(x, xq, x_scale, &factors) || !ban(factors, banned, banned_count, approx)) {
    return kNoPick;
  }
  // Ranges of whole 16-column blocks (pass 2 computes a block at a time).
  const size_t columns = active_columns();
  const size_t blocks = (columns + f32::kBlockColumns - 1) / f32::kBlockColumns;
  size_t ranges = parallel.workers * kChunksPerThread;
  if (ranges > kMaxRanges) ranges = kMaxRanges;
  if (ranges > blocks) ranges = blocks;
  auto range_begin = [&](size_t c) {
    const size_t n = c * blocks / ranges * f32::kBlockColumns;
    return n < columns ? n : columns;
  };
  float lows[kMaxRanges];
  bool finite[kMaxRanges];
  auto bounds_task = [&](size_t c, size_t) {
    lows[c] = upper_bounds(factors, range_begin(c), range_begin(c + 1), approx, &finite[c]);
  };
  const size_t per_range = columns / ranges * kPassNanosecondsPerId;
  parallel_for(parallel, ranges, per_range, bounds_task);
  // The best lower bound over all ranges: max is the same in any order.
  float threshold = -INFINITY;
  for (size_t c = 0; c < ranges; ++c) {
    if (!finite[c]) return kNoPick;
    threshold = lows[c] > threshold ? lows[c] : threshold;
  }
  if (!(threshold > -INFINITY)) return kNoPick;
  const size_t slot_floats = UnpackedF32Linear::scratch_floats(depth_);
  Candidate found[kMaxRanges];
  auto candidates_task = [&](size_t c, size_t slot) {
    float* own = block_scratch != nullptr ? block_scratch + slot * slot_floats : nullptr;
    found[c] = Candidate{};
    best_candidate(x, approx, threshold, range_begin(c), range_begin(c + 1), own, &found[c]);
  };
  parallel_for(parallel, ranges, per_range, candidates_task);
  // In id order, a later range only wins with a larger value: the lowest id
  // among equals, as one pass over the row takes it.
  Candidate best;
  for (size_t c = 0; c < ranges; ++c) {
    if (found[c].id != kNoPick && (best.id == kNoPick || found[c].y > best.y)) best = found[c];
  }
  return best.id;
}

}  // namespace edgemt
