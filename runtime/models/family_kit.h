// The family kit: what every model family has in common, written once
// (docs/ARCHITECTURE.md, "Add a model family"). A family writes its
// computation and gets from here
//   - FamilyModel<...>: its EncoderDecoder (plan and commit, encode, decode
//     steps ending in the shared OutputHead with its arg-max shortcut,
//     reordering, attention weights, compute path);
//   - family_record<...>(): its `Family` record for the registry
//     (models/families.cc), constant-initialized.
// What the family provides, as overloads on its own types (found by
// argument-dependent lookup: Config is its config, Weights, Workspace and
// Context its load-phase weights, run-phase buffers and run context):
//   Status read_config(const Table&, Config*)        the file's config table
//   uint32_t vocab_size(const Config&), source_vocab_size(const Config&),
//            max_sequence_length(const Config&)
//   bool for_each_expected_tensor(const Config&, WeightTypes, ExpectedTensorVisitor, void*)
//   void describe_config(const Config&, char*, size_t)
//   Status check_attention_choice(const Config&, int layer, int head)
//   const char* own_kernels(const Config&, const Weights&)  compute-path words (nullptr: none)
//   Status load_weights(const Model&, const NetworkOptions&, Weights*)
//   void plan_workspace(const Config&, const Weights&, const RunShape&, Arena*, Workspace*)
//   Status run_encoder(const Context&, const int32_t* ids, const PackedSequences&)
//   Status run_decoder_layers(const Context&, const PackedSequences&, const DecoderStep&)
//   const float* head_input(const Context&)          [R, K] the output head's input
//   const float* attention_weights(const Workspace&, size_t* stride)
//   void reorder_state(const Context&, first_slot, old_count, parent, new_count, positions)
// Weights hold `OutputHead head` and `bool f16_native`; Workspace `float*
// logits`, `LinearScratch dec_linear_scratch` and `OutputHead::Scratch
// head_scratch`; Context is an aggregate that starts {config, weights,
// workspace, parallel, profile}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>

#include "core/profile.h"
#include "core/xnnpack_runtime.h"
#include "edgemt/model.h"
#include "edgemt/status.h"
#include "models/compute_path.h"
#include "models/encoder_decoder.h"
#include "models/families.h"
#include "models/output_head.h"

namespace edgemt {
namespace family_kit {

// The family's functions that share a name with an EncoderDecoder method,
// called from here so that argument-dependent lookup finds them (inside the
// class the method's name would hide them).
template <typename Workspace>
const float* attention_of(const Workspace& workspace, size_t* stride) {
  return attention_weights(workspace, stride);
}
template <typename Config>
Status check_attention_of(const Config& config, int layer, int head) {
  return check_attention_choice(config, layer, head);
}
template <typename Context>
void reorder_of(const Context& c, size_t first_slot, size_t old_count, const size_t* parent,
                size_t new_count, size_t positions) {
  reorder_state(c, first_slot, old_count, parent, new_count, positions);
}

}  // namespace family_kit

template <typename Config, typename Weights, typename Workspace, typename Context>
class FamilyModel final : public EncoderDecoder {
 public:
  FamilyModel(const Model& model, const Config& config) : model_(model), config_(config) {}

  [[nodiscard]] Status load(const NetworkOptions& options) {
    return load_weights(model_, options, &weights_);
  }

  void plan(const RunShape& run, Arena* arena) override {
    pending_ = Workspace();
    plan_workspace(config_, weights_, run, arena, &pending_);
    weights_.head.plan(run.rows, run.workers, {run_step::kDecodeOutput, run_step::kDecodeOutput},
                       run.output_columns, arena, &pending_.head_scratch);
  }
  void commit_plan() override { workspace_ = pending_; }

  Status encode(const Execution& execution, const int32_t* ids,
                const PackedSequences& sources) override {
    return run_encoder(context(execution), ids, sources);
  }

  Status decode_step(const Execution& execution, const PackedSequences& sources,
                     const DecoderStep& step) override {
    const Context c = context(execution);
    ProfileScope timed_step(c.profile, ProfilePart::kDecoderStep);
    EDGEMT_RETURN_IF_ERROR(run_decoder_layers(c, sources, step));
    ProfileScope timed(c.profile, ProfilePart::kOutputProjection);
    return weights_.head.run(head_input(c), step.rows, workspace_.logits, c.parallel,
                             workspace_.dec_linear_scratch, workspace_.head_scratch);
  }

  Status decode_step_argmax(const Execution& execution, const PackedSequences& sources,
                            const DecoderStep& step, const int32_t* banned, size_t banned_count,
                            size_t* best) override {
    const Context c = context(execution);
    ProfileScope timed_step(c.profile, ProfilePart::kDecoderStep);
    EDGEMT_RETURN_IF_ERROR(run_decoder_layers(c, sources, step));
    ProfileScope timed(c.profile, ProfilePart::kOutputProjection);
    return weights_.head.run_argmax(head_input(c), step.rows, banned, banned_count,
                                    workspace_.logits, best, c.parallel,
                                    workspace_.dec_linear_scratch, workspace_.head_scratch);
  }

  Status set_argmax_shortcut(bool on) override { return weights_.head.set_argmax_shortcut(on); }
  Status finish_load(bool shortlisted) override { return weights_.head.finish_load(shortlisted); }
  bool every_logit_slow() const override { return weights_.head.every_logit_slow(); }
  size_t argmax_shortcut_bytes() const override { return weights_.head.shortcut_bytes(); }

  float* logits() override { return workspace_.logits; }
  void select_output_columns(const int32_t* ids, size_t count) override {
    weights_.head.select_columns(ids, count, workspace_.head_scratch);
  }

  const float* attention_weights(size_t* stride) const override {
    return family_kit::attention_of(workspace_, stride);
  }
  Status check_attention_choice(int layer, int head) const override {
    return family_kit::check_attention_of(config_, layer, head);
  }

  void reorder_state(const Execution& execution, size_t first_slot, size_t old_count,
                     const size_t* parent, size_t new_count, size_t positions) override {
    family_kit::reorder_of(context(execution), first_slot, old_count, parent, new_count, positions);
  }

  void describe_compute_path(char* out, size_t size) const override {
    describe_linear_compute_path(model_, weights_.head.linear(), weights_.head.argmax_possible(),
                                 weights_.f16_native, own_kernels(config_, weights_), out, size);
  }

 private:
  Context context(const Execution& execution) {
    return Context{&config_, &weights_, &workspace_, execution.parallel, execution.profile};
  }

  const Model& model_;
  const Config& config_;
  Weights weights_;
  Workspace workspace_;  // the committed plan's buffers
  Workspace pending_;    // the plan being made (measured or bound)
};

// The Family record's functions, one instantiation per family.
namespace family_kit {

template <typename Config>
const Config& config_of(const FamilyConfig& c) {
  return c.as<Config>();
}

template <typename Config, typename Table, const Table* (format::Model::*Member)() const,
          FamilyId Id>
Status read_family_config(const format::Model& root, FamilyConfig* out) {
  const Table* table = (root.*Member)();
  if (table == nullptr) return Status::error(StatusCode::kInvalidModel, "model has no family_config");
  out->id = Id;
  return read_config(*table, &out->emplace<Config>());
}

template <typename Config>
uint32_t vocab(const FamilyConfig& c) { return vocab_size(config_of<Config>(c)); }
template <typename Config>
uint32_t source_vocab(const FamilyConfig& c) { return source_vocab_size(config_of<Config>(c)); }
template <typename Config>
uint32_t max_length(const FamilyConfig& c) { return max_sequence_length(config_of<Config>(c)); }

template <typename Config>
bool walk(const FamilyConfig& c, WeightTypes types, ExpectedTensorVisitor visit, void* context) {
  return for_each_expected_tensor(config_of<Config>(c), types, visit, context);
}

template <typename Config>
void describe(const FamilyConfig& c, char* out, size_t size) {
  describe_config(config_of<Config>(c), out, size);
}

template <typename Config, typename Runtime>
Status create(const Model& model, const NetworkOptions& options, std::unique_ptr<EncoderDecoder>* out) {
  EDGEMT_RETURN_IF_ERROR(ensure_xnnpack_initialized());  // Linears may be XNNPACK operators
  std::unique_ptr<Runtime> runtime(new (std::nothrow) Runtime(model, config_of<Config>(family_config(model))));
  if (!runtime) return Status::error(StatusCode::kOutOfMemory, "cannot allocate the model's layers");
  EDGEMT_RETURN_IF_ERROR(runtime->load(options));
  *out = std::move(runtime);
  return Status::ok();
}

}  // namespace family_kit

// The `Family` record of a family whose config is Config, read from the
// file's FamilyConfig union member Table (through Member), run by Runtime
// (a FamilyModel); `int8_float_tables` as Family says.
template <typename Config, typename Table, const Table* (format::Model::*Member)() const,
          FamilyId Id, typename Runtime>
constexpr Family family_record(const char* name, bool int8_float_tables = false) {
  return Family{Id,
                name,
                family_kit::read_family_config<Config, Table, Member, Id>,
                family_kit::vocab<Config>,
                family_kit::source_vocab<Config>,
                family_kit::max_length<Config>,
                family_kit::walk<Config>,
                family_kit::describe<Config>,
                family_kit::create<Config, Runtime>,
                int8_float_tables};
}

}  // namespace edgemt
