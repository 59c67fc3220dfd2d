#include "models/rnn/rnn.h"

#include "models/family_kit.h"
#include "models/rnn/config_schema.h"
#include "models/rnn/decoder.h"
#include "models/rnn/encoder.h"
#include "models/rnn/tensor_layout.h"
#include "models/rnn/weights.h"
#include "models/rnn/workspace.h"

namespace edgemt::rnn {

// What the family kit (models/family_kit.h) asks of the RNN family besides
// its encoder and decoder.

void plan_workspace(const RnnConfig& config, const RnnWeights& weights, const RunShape& run,
                    Arena* arena, RnnWorkspace* out) {
  RnnWorkspaceShape shape;
  shape.source_rows = run.source_rows;
  shape.max_source_len = run.max_source_len;
  shape.rows = run.rows;
  shape.sentences = run.max_beam != 0 ? run.rows / run.max_beam : run.rows;
  shape.int8 = weights.int8;
  shape.f16 = weights.f16_native;
  plan_workspace(config, shape, run.max_beam, arena, out);
}

const float* attention_weights(const RnnWorkspace& workspace, size_t* stride) {
  *stride = workspace.max_source_len;
  return workspace.weights;
}

// One attention, no layers or heads to choose from.
Status check_attention_choice(const RnnConfig& /*config*/, int layer, int head) {
  if (layer > 0 || head > 0 || layer < -1 || head < -1) {
    return Status::error(StatusCode::kInvalidArgument,
                         "an RNN model has one attention (layer %d, head %d asked): "
                         "only layer 0 (or -1) and head 0 (or -1)", layer, head);
  }
  return Status::ok();
}

const char* own_kernels(const RnnConfig& /*config*/, const RnnWeights& /*weights*/) {
  return "own RNN cell and attention kernels";
}

using RnnModel = FamilyModel<RnnConfig, RnnWeights, RnnWorkspace, RnnRunContext>;

const Family kFamily =
    family_record<RnnConfig, format::RnnConfig, &format::Model::family_config_as_RnnConfig,
                  FamilyId::RnnConfig, RnnModel>("rnn");

}  // namespace edgemt::rnn
