#include "models/transformer/transformer.h"

#include <new>
#include <utility>

#include "core/xnnpack_runtime.h"
#include "models/compute_path.h"
#include "models/families.h"
#include "models/transformer/config_schema.h"
#include "models/transformer/tensor_layout.h"
#include "models/transformer/config.h"
#include "models/transformer/decoder.h"
#include "models/transformer/encoder.h"
#include "models/transformer/weights.h"
#include "models/transformer/workspace.h"

namespace edgemt {
namespace {

class Transformer final : public EncoderDecoder {
 public:
  explicit Transformer(const Model& model) : model_(model), config_(transformer_config(model)) {}

  Status load(size_t threads) { return load_transformer_weights(model_, threads, &weights_); }

  void plan(const RunShape& run, Arena* arena) override {
    WorkspaceShape shape;
    shape.source_rows = run.source_rows;
    shape.max_source_len = run.max_source_len;
    shape.rows = run.rows;
    shape.max_beam = run.max_beam;
    shape.max_target_len = run.max_target_len;
    shape.d_model = config_.d_model;
    shape.ffn_dim = config_.ffn_dim;
    shape.vocab = config_.vocab_size;
    shape.encoder_layers = config_.encoder_layers;
    shape.decoder_layers = config_.decoder_layers;
    shape.workers = run.workers;
    shape.int8 = model_.weight_dtype() == DType::kI8;
    shape.f16 = weights_.f16_native;
    shape.raw_self_memory = config_.raw_decoder_self_memory;
    shape.heads = config_.heads;
    shape.attention = run.attention;
    shape.attention_layer = run.attention_layer;
    shape.attention_head = run.attention_head;
    shape.argmax_shortcut = weights_.output.is_packed_f32() || !weights_.output_rows.empty();
    shape.unpacked_output = !weights_.output_rows.empty();
    pending_ = Workspace();
    plan_workspace(shape, arena, &pending_);
  }

  void commit_plan() override { workspace_ = pending_; }

  Status encode(const Execution& execution, const int32_t* ids,
                const PackedSequences& sources) override {
    return run_encoder(context(execution), ids, sources);
  }

  Status decode_step(const Execution& execution, const PackedSequences& sources,
                     const DecoderStep& step) override {
    return run_decoder_step(context(execution), sources, step);
  }

  Status decode_step_argmax(const Execution& execution, const PackedSequences& sources,
                            const DecoderStep& step, const int32_t* banned, size_t banned_count,
                            size_t* best) override {
    return run_decoder_step_argmax(context(execution), sources, step, banned, banned_count, best);
  }

  // Only for an output projection on the own f32 GEMM: an int8 or f16 one
  // reads no more than its shortcut would. Built before the projection is
  // packed (set before the first prepare()), it reads the file's rows and
  // the projection stays unpacked: the pack is never made unless the
  // shortcut is turned off again.
  Status set_argmax_shortcut(bool on) override {
    if (!on) {  // packed first: on failure the translator is as it was
      EDGEMT_RETURN_IF_ERROR(pack_output_projection(&weights_));
      argmax_shortcut_ = ArgmaxShortcut();
      return Status::ok();
    }
    if (!argmax_shortcut_.empty()) return Status::ok();
    if (weights_.output.is_packed_f32()) {
      return argmax_shortcut_.create(weights_.output.f32_packed(), kernels::f32::fast_gemm_kernel());
    }
    if (weights_.output_rows.empty()) return Status::ok();
    // create() reads every row twice, a chunk of rows at a time: each
    // chunk's file pages go once read, so the matrix is never resident
    // whole beside the copy being built (its peak, not only its end).
    EDGEMT_RETURN_IF_ERROR(argmax_shortcut_.create(releasing_output_rows(weights_)));
    model_.release_tensor_pages(*weights_.output_tensor);  // the pages chunks shared
    return Status::ok();
  }

  // Without the shortcut, every step needs every logit: the pack.
  Status finish_load() override {
    return argmax_shortcut_.empty() ? pack_output_projection(&weights_) : Status::ok();
  }

  size_t argmax_shortcut_bytes() const override { return argmax_shortcut_.bytes(); }

  float* logits() override { return workspace_.logits; }

  const float* attention_weights(size_t* stride) const override {
    *stride = workspace_.max_source_len;
    return workspace_.cross_weights;
  }

  Status check_attention_choice(int layer, int head) const override {
    const int layers = static_cast<int>(config_.decoder_layers);
    const int heads = static_cast<int>(config_.heads);
    if (layer < -1 || layer >= layers || head < -1 || head >= heads) {
      return Status::error(StatusCode::kInvalidArgument,
                           "layer %d, head %d asked; the decoder has layers 0..%d and heads 0..%d "
                           "(-1: the last layer; the mean over heads)", layer, head, layers - 1, heads - 1);
    }
    return Status::ok();
  }

  void reorder_state(const Execution& execution, size_t first_slot, size_t old_count,
                     const size_t* parent, size_t new_count, size_t positions) override {
    reorder_cache(context(execution), first_slot, old_count, parent, new_count, positions);
  }

  void describe_compute_path(char* out, size_t size) const override {
    describe_linear_compute_path(model_, weights_.output,
                                 weights_.output.is_packed_f32() || !weights_.output_rows.empty(),
                                 weights_.f16_native, nullptr, out, size);
  }

 private:
  RunContext context(const Execution& execution) {
    RunContext c;
    c.config = &config_;
    c.weights = &weights_;
    c.workspace = &workspace_;
    c.parallel = execution.parallel;
    c.profile = execution.profile;
    c.argmax_shortcut = &argmax_shortcut_;
    return c;
  }

  const Model& model_;
  const TransformerConfig& config_;
  TransformerWeights weights_;
  ArgmaxShortcut argmax_shortcut_;  // empty unless set_argmax_shortcut(true)
  Workspace workspace_;  // the committed plan's buffers
  Workspace pending_;    // the plan being made (measured or bound)
};

}  // namespace

Status create_transformer(const Model& model, size_t threads, std::unique_ptr<EncoderDecoder>* out) {
  EDGEMT_RETURN_IF_ERROR(ensure_xnnpack_initialized());  // its Linears are XNNPACK operators
  std::unique_ptr<Transformer> transformer(new (std::nothrow) Transformer(model));
  if (!transformer) return Status::error(StatusCode::kOutOfMemory, "cannot allocate the model's layers");
  EDGEMT_RETURN_IF_ERROR(transformer->load(threads));
  *out = std::move(transformer);
  return Status::ok();
}

namespace {

Status read_config(const format::Model& root, FamilyConfig* out) {
  const format::TransformerConfig* config = root.family_config_as_TransformerConfig();
  if (config == nullptr) return Status::error(StatusCode::kInvalidModel, "model has no family_config");
  out->id = FamilyId::kTransformer;
  return read_transformer_config(*config, &out->emplace<TransformerConfig>());
}

const TransformerConfig& of(const FamilyConfig& c) { return c.as<TransformerConfig>(); }
uint32_t vocab_size(const FamilyConfig& c) { return of(c).vocab_size; }
uint32_t source_vocab_size(const FamilyConfig& c) { return edgemt::source_vocab_size(of(c)); }
uint32_t max_sequence_length(const FamilyConfig& c) { return of(c).max_positions; }

bool walk_tensors(const FamilyConfig& c, DType weight_dtype, ExpectedTensorVisitor visit,
                  void* context) {
  return for_each_expected_tensor(of(c), weight_dtype, visit, context);
}

void describe(const FamilyConfig& c, char* out, size_t size) {
  describe_transformer_config(of(c), out, size);
}

}  // namespace

const Family kTransformerFamily = {
    FamilyId::kTransformer,
    "transformer",
    static_cast<uint8_t>(format::FamilyConfig::TransformerConfig),
    read_config,
    vocab_size,
    source_vocab_size,
    max_sequence_length,
    walk_tensors,
    describe,
    create_transformer,
};

}  // namespace edgemt
