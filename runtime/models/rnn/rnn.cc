#include "models/rnn/rnn.h"

#include <new>
#include <utility>

#include "core/xnnpack_runtime.h"
#include "models/compute_path.h"
#include "models/rnn/config_schema.h"
#include "models/rnn/decoder.h"
#include "models/rnn/encoder.h"
#include "models/rnn/tensor_layout.h"
#include "models/rnn/weights.h"
#include "models/rnn/workspace.h"

namespace edgemt {
namespace {

class Rnn final : public EncoderDecoder {
 public:
  explicit Rnn(const Model& model) : model_(model), config_(rnn_config(model)) {}

  Status load(size_t threads) { return load_rnn_weights(model_, threads, &weights_); }

  void plan(const RunShape& run, Arena* arena) override {
    RnnWorkspaceShape shape;
    shape.source_rows = run.source_rows;
    shape.max_source_len = run.max_source_len;
    shape.rows = run.rows;
    shape.sentences = run.max_beam != 0 ? run.rows / run.max_beam : run.rows;
    shape.int8 = model_.weight_dtype() == DType::kI8;
    shape.f16 = weights_.f16_native;
    pending_ = RnnWorkspace();
    plan_rnn_workspace(config_, shape, run.max_beam, arena, &pending_);
  }

  void commit_plan() override { workspace_ = pending_; }

  Status encode(const Execution& execution, const int32_t* ids, const PackedSequences& sources) override {
    return run_rnn_encoder(context(execution), ids, sources);
  }

  Status decode_step(const Execution& execution, const PackedSequences& sources,
                     const DecoderStep& step) override {
    return run_rnn_decoder_step(context(execution), sources, step);
  }

  float* logits() override { return workspace_.logits; }

  const float* attention_weights(size_t* stride) const override {
    *stride = workspace_.max_source_len;
    return workspace_.weights;
  }

  // One attention, no layers or heads to choose from.
  Status check_attention_choice(int layer, int head) const override {
    if (layer > 0 || head > 0 || layer < -1 || head < -1) {
      return Status::error(StatusCode::kInvalidArgument,
                           "an RNN model has one attention (layer %d, head %d asked): "
                           "only layer 0 (or -1) and head 0 (or -1)", layer, head);
    }
    return Status::ok();
  }

  void reorder_state(const Execution& execution, size_t first_slot, size_t old_count, const size_t* parent,
                     size_t new_count, size_t /*positions*/) override {
    reorder_rnn_state(context(execution), first_slot, old_count, parent, new_count);
  }

  void describe_compute_path(char* out, size_t size) const override {
    describe_linear_compute_path(model_, weights_.output, weights_.output.is_packed_f32(), weights_.f16_native,
                                 "own RNN cell and attention kernels", out, size);
  }

 private:
  RnnRunContext context(const Execution& execution) {
    RnnRunContext c;
    c.config = &config_;
    c.weights = &weights_;
    c.workspace = &workspace_;
    c.parallel = execution.parallel;
    c.profile = execution.profile;
    return c;
  }

  const Model& model_;
  const RnnConfig& config_;
  RnnWeights weights_;
  RnnWorkspace workspace_;
  RnnWorkspace pending_;
};

Status read_config(const format::Model& root, FamilyConfig* out) {
  const format::RnnConfig* config = root.family_config_as_RnnConfig();
  if (config == nullptr) return Status::error(StatusCode::kInvalidModel, "model has no family_config");
  out->id = FamilyId::kRnn;
  return read_rnn_config(*config, &out->emplace<RnnConfig>());
}

const RnnConfig& of(const FamilyConfig& c) { return c.as<RnnConfig>(); }
uint32_t vocab_size(const FamilyConfig& c) { return of(c).vocab_size; }
uint32_t source_vocab_size(const FamilyConfig& c) { return rnn_source_vocab_size(of(c)); }
uint32_t max_sequence_length(const FamilyConfig& c) { return of(c).max_positions; }

bool walk_tensors(const FamilyConfig& c, DType weight_dtype, ExpectedTensorVisitor visit, void* context) {
  return for_each_expected_tensor(of(c), weight_dtype, visit, context);
}

void describe(const FamilyConfig& c, char* out, size_t size) { describe_rnn_config(of(c), out, size); }

}  // namespace

Status create_rnn(const Model& model, size_t threads, std::unique_ptr<EncoderDecoder>* out) {
  EDGEMT_RETURN_IF_ERROR(ensure_xnnpack_initialized());
  std::unique_ptr<Rnn> rnn(new (std::nothrow) Rnn(model));
  if (!rnn) return Status::error(StatusCode::kOutOfMemory, "cannot allocate the model's layers");
  EDGEMT_RETURN_IF_ERROR(rnn->load(threads));
  *out = std::move(rnn);
  return Status::ok();
}

const Family kRnnFamily = {
    FamilyId::kRnn,
    "rnn",
    static_cast<uint8_t>(format::FamilyConfig::RnnConfig),
    read_config,
    vocab_size,
    source_vocab_size,
    max_sequence_length,
    walk_tensors,
    describe,
    create_rnn,
};

}  // namespace edgemt
