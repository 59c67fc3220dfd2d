#include "models/output_head.h"

#include "kernels/column_gather.h"
#include "kernels/f32_gemm.h"
#include "models/encoder_decoder.h"

namespace edgemt {
namespace {

// Whether `table` is the projection `weight` [V, K] itself (a tied output),
// so that the projection's pack can serve its rows: the same bytes, dtype
// and shape, and for I8 the same row scales. Sharing bytes is not enough:
// a file may point a table with more rows (a larger source vocabulary) at
// the projection's offset without the config tying them, and its last rows
// would then lie beyond the pack.
bool is_same_matrix(const kernels::EmbeddingTable& table, const TensorView& weight,
                    const float* weight_scales) {
  return table.data == weight.data && table.dtype == weight.dtype && table.vocab == weight.shape[0] &&
         table.dim == weight.shape[1] && (weight.dtype != DType::kI8 || table.row_scale == weight_scales);
}

}  // namespace

Status OutputHead::load(const Model& model, MatrixLoader* loader, const char* weight_name,
                        const char* bias_name, kernels::EmbeddingTable* const* tables,
                        size_t table_count, size_t* matrix_bytes) {
  const TensorView* weight = nullptr;
  EDGEMT_RETURN_IF_ERROR(find_tensor(model, weight_name, &weight));
  in_ = weight->shape[1];
  vocab_ = weight->shape[0];
  model_ = &model;
  tensor_ = weight;
  matrix_bytes_ = matrix_bytes;
  const float* weight_scales = nullptr;  // I8: a tie shares these too
  if (weight->dtype == DType::kI8) {
    EDGEMT_RETURN_IF_ERROR(find_row_scales(model, weight_name, &weight_scales));
  }
  bool tied_f32 = false;
  for (size_t i = 0; i < table_count && i < 2; ++i) {
    if (!is_same_matrix(*tables[i], *weight, weight_scales)) continue;
    tables_[i] = tables[i];
    tied_f32 = tied_f32 || weight->dtype == DType::kF32;
  }
  if (weight->dtype == DType::kF32 && f32_matrix_on_own_gemm(tied_f32)) {
    // Where MatrixLoader would pack it for the own f32 GEMM: packed later
    // (finish_load), or never when the arg-max shortcut serves every step.
    const float* bias = nullptr;
    if (bias_name != nullptr) EDGEMT_RETURN_IF_ERROR(find_vector(model, bias_name, &bias));
    return rows_.create(static_cast<const float*>(weight->data), bias, in_, vocab_);
  }
  EDGEMT_RETURN_IF_ERROR(loader->matrix(&output_, weight_name, bias_name, false, tied_f32));
  // A tied int8 projection holds the embedding's rows and row scales,
  // packed: the tables read their rows from it (the same values), so the
  // matrix is resident once.
  if (output_.is_int8()) {
    for (kernels::EmbeddingTable* table : tables_) {
      if (table != nullptr && table->dtype == DType::kI8) table->packed_rows = output_.int8_packed();
    }
  }
  return Status::ok();
}

UnpackedF32Linear OutputHead::releasing_rows() const {
  UnpackedF32Linear rows = rows_;
  rows.set_release(
      [](const void* context, const float* part, size_t floats) {
        const OutputHead& head = *static_cast<const OutputHead*>(context);
        TensorView view = *head.tensor_;
        view.data = part;
        view.size_bytes = floats * sizeof(float);
        head.model_->release_tensor_pages(view);
      },
      this);
  return rows;
}

Status OutputHead::set_argmax_shortcut(bool on) {
  if (!on) {  // the projection is packed at the next finish_load() if needed
    shortcut_ = ArgmaxShortcut();
    return Status::ok();
  }
  if (!shortcut_.empty()) return Status::ok();
  if (output_.is_packed_f32()) {
    return shortcut_.create(output_.f32_packed(), kernels::f32::fast_gemm_kernel());
  }
  if (rows_.empty()) return Status::ok();  // int8 or f16: it reads no more than a shortcut would
  // create() reads every row twice, a chunk of rows at a time: each chunk's
  // file pages go once read, so the matrix is never resident whole beside
  // the copy being built (its peak, not only its end).
  EDGEMT_RETURN_IF_ERROR(shortcut_.create(releasing_rows()));
  model_->release_tensor_pages(*tensor_);  // the pages chunks shared
  return Status::ok();
}

Status OutputHead::finish_load(bool shortlisted) {
  // With a shortlist the shortcut works on each batch's candidates only:
  // its int8 copy as rows, from which a batch's candidates are packed
  // (ArgmaxShortcut::set_rows).
  EDGEMT_RETURN_IF_ERROR(shortcut_.set_rows(shortlisted && selections_take_shortcut()));
  return shortcut_.empty() && !shortlisted ? pack() : Status::ok();
}

Status OutputHead::pack() {
  if (rows_.empty() || output_.out_features() != 0) return Status::ok();
  // Packed a part at a time, each part's file pages released once packed:
  // the matrix is never resident twice, not even while packing.
  const Status packed = output_.create_packed_f32(releasing_rows());
  if (!packed.is_ok()) {
    return Status::error(packed.code(), "tensor '%s': %s", tensor_->name, packed.message());
  }
  *matrix_bytes_ += output_.packed_bytes();
  // A tied one: the tables read their rows from the pack (the same values).
  for (kernels::EmbeddingTable* table : tables_) {
    if (table != nullptr && table->dtype == DType::kF32) table->packed_f32_rows = output_.f32_packed();
  }
  model_->release_tensor_pages(*tensor_);  // the pages parts shared
  return Status::ok();
}

size_t OutputHead::selection_bytes(size_t columns) const {
  if (output_.is_packed_f32() || !rows_.empty()) return kernels::f32::packed_bytes(columns, in_);
  if (output_.is_int8()) return kernels::int8::packed_bytes(columns, in_);
  return 0;  // XNNPACK keeps its pack to itself
}

void OutputHead::plan(size_t rows, size_t workers, Lifetime lifetime, size_t selected_columns,
                      Arena* arena, Scratch* out) const {
  *out = Scratch();
  const size_t selected_bytes = selected_columns > 0 ? selection_bytes(selected_columns) : 0;
  if (selected_bytes > 0) {
    out->selected = arena->allocate<uint8_t>(selected_bytes, kWholeDecode);
    out->selected_capacity = selected_columns;
    if (selections_take_shortcut()) {
      out->selected_argmax =
          arena->allocate<uint8_t>(shortcut_.selection_bytes(selected_columns), kWholeDecode);
    }
  }
  if (!argmax_possible()) return;
  plan_linear_scratch(rows, in_, vocab_, /*int8=*/true, /*f16=*/false, lifetime, arena, &out->argmax);
  if (!rows_.empty()) {
    out->blocks = arena->allocate<float>(workers * UnpackedF32Linear::scratch_floats(in_), lifetime);
  }
}

void OutputHead::select_columns(const int32_t* ids, size_t count, const Scratch& scratch) {
  selected_ids_ = ids;
  selected_count_ = count;
  selected_pack_ = false;
  shortcut_.select(nullptr, 0, nullptr, nullptr);
  if (ids == nullptr || count > scratch.selected_capacity || scratch.selected == nullptr) return;
  if (output_.is_packed_f32()) {
    kernels::gather_columns(output_.f32_packed(), ids, count, scratch.selected, &selected_f32_);
  } else if (output_.out_features() == 0 && !rows_.empty()) {
    // Unpacked: the candidates' rows of the file, each read once per batch.
    kernels::pack_rows(rows_.weight(), rows_.bias(), in_, ids, count, scratch.selected,
                       &selected_f32_, kernels::f32::kTinyWeightsRead);
  } else if (output_.is_int8()) {
    kernels::gather_columns(output_.int8_packed(), ids, count, scratch.selected, &selected_int8_);
  } else {
    return;
  }
  selected_pack_ = true;
  // The shortcut's own gather, for an f32 selection (the exact values come
  // from the pack just made).
  if (!output_.is_int8() && scratch.selected_argmax != nullptr) {
    shortcut_.select(ids, count, &selected_f32_, scratch.selected_argmax);
  }
}

Status OutputHead::run_selected(const float* x, size_t rows, float* logits,
                                const Parallel& parallel, const LinearScratch& linear,
                                const Scratch& scratch) const {
  const size_t count = selected_count_;
  if (selected_pack_ && output_.is_int8()) {
    return output_.int8_linear().run_columns(x, rows, logits, parallel, linear, selected_int8_);
  }
  if (selected_pack_) {
    kernels::f32::GemmArgs args;
    args.x = x;
    args.x_stride = in_;
    args.rows = rows;
    args.weights = &selected_f32_;
    args.y = logits;
    args.y_stride = count;
    const kernels::f32::GemmKernel kernel = kernels::f32::fast_gemm_kernel();
    auto blocks = [&](size_t first, size_t block_count) { kernel(args, first, block_count); };
    // ~16 multiply-adds per ns; 4 blocks (64 columns) is the kernels' widest tile.
    run_column_blocks(parallel, selected_f32_.block_count, 4, rows * in_ * count / 16, blocks);
    return Status::ok();
  }
  const int32_t* ids = selected_ids_;
  if (!rows_.empty() && output_.out_features() == 0) {
    // The file's rows, unpacked, and more candidates than the batch's pack
    // holds: each step packs them 64 at a time into a worker's slot (the
    // bits of a pack: UnpackedF32Linear), reading only their rows.
    constexpr size_t kChunk = UnpackedF32Linear::kGroupBlocks * kernels::f32::kBlockColumns;
    const size_t slot_floats = UnpackedF32Linear::scratch_floats(in_);
    const kernels::f32::GemmKernel kernel = rows_.kernel();
    auto chunk = [&](size_t c, size_t slot) {
      const size_t first = c * kChunk;
      const size_t n = count - first < kChunk ? count - first : kChunk;
      kernels::f32::PackedWeights packed;
      kernels::pack_rows(rows_.weight(), rows_.bias(), in_, ids + first, n,
                         scratch.blocks + slot * slot_floats, &packed, false);  // for one product
      kernels::f32::GemmArgs args;
      args.x = x;
      args.x_stride = in_;
      args.rows = rows;
      args.weights = &packed;
      args.y = logits + first;
      args.y_stride = count;
      kernel(args, 0, packed.block_count);
    };
    // Per chunk: the transposition (~1 ns per weight) and rows x 64 x K
    // multiply-adds (~16 per ns).
    parallel_for(parallel, (count + kChunk - 1) / kChunk, kChunk * in_ * (16 + rows) / 16, chunk);
    return Status::ok();
  }
  // Every logit, then the selected ones moved to the front of each row. In
  // place: entry (r, j) goes to r·count + j <= r·V + ids[j], never past an
  // entry still to be read.
  EDGEMT_RETURN_IF_ERROR(run_full(x, rows, logits, parallel, linear, scratch));
  for (size_t r = 0; r < rows; ++r) {
    const float* row = logits + r * vocab_;
    float* kept = logits + r * count;
    for (size_t j = 0; j < count; ++j) kept[j] = row[ids[j]];
  }
  return Status::ok();
}

Status OutputHead::run(const float* x, size_t rows, float* logits, const Parallel& parallel,
                       const LinearScratch& linear, const Scratch& scratch) const {
  if (selected_ids_ != nullptr) return run_selected(x, rows, logits, parallel, linear, scratch);
  return run_full(x, rows, logits, parallel, linear, scratch);
}

Status OutputHead::run_full(const float* x, size_t rows, float* logits, const Parallel& parallel,
                            const LinearScratch& linear, const Scratch& scratch) const {
  if (output_.out_features() != 0 || rows_.empty()) return output_.run(x, rows, logits, parallel, &linear);
  // Unpacked (the shortcut's rows): the file's rows, the same bits as the pack.
  rows_.run(x, rows, logits, scratch.blocks, parallel);
  return Status::ok();
}

Status OutputHead::run_argmax(const float* x, size_t rows, const int32_t* banned,
                              size_t banned_count, float* logits, size_t* best,
                              const Parallel& parallel, const LinearScratch& linear,
                              const Scratch& scratch) const {
  if (shortcut_.empty() || (selected_ids_ != nullptr && !shortcut_.selected()) ||
      (selected_ids_ == nullptr && shortcut_.rows())) {
    for (size_t r = 0; r < rows; ++r) best[r] = EncoderDecoder::kFullLogits;
    return run(x, rows, logits, parallel, linear, scratch);
  }
  // The shortcut's approximations go where the logits would.
  EDGEMT_RETURN_IF_ERROR(shortcut_.pick(x, rows, banned, banned_count, logits, scratch.argmax,
                                        scratch.blocks, parallel, best));
  for (size_t r = 0; r < rows; ++r) {
    if (best[r] != ArgmaxShortcut::kNoPick) continue;
    best[r] = EncoderDecoder::kFullLogits;  // the row as run() leaves it
    EDGEMT_RETURN_IF_ERROR(
        run(x + r * in_, 1, logits + r * selected_count(), parallel, linear, scratch));
  }
  return Status::ok();
}

}  // namespace edgemt
