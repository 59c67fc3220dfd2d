#include "models/rnn/weights.h"

#include <new>

#include "models/matrix_loader.h"
#include "models/rnn/tensor_layout.h"

namespace edgemt::rnn {
namespace {

using T = RnnTensor;

// A LINEAR entry: `<prefix>.weight` (+ `_scale`) and `<prefix>.bias`.
Status linear(MatrixLoader* load, Linear* out, T entry, uint32_t layer) {
  char prefix[kMaxTensorNameLength];
  (void)tensor_name(entry, layer, prefix, sizeof(prefix));
  return load->linear(out, prefix, false);
}

// A MATRIX entry with an optional VECTOR bias entry.
Status matrix(MatrixLoader* load, Linear* out, T entry, const T* bias_entry) {
  char weight[kMaxTensorNameLength];
  char bias[kMaxTensorNameLength];
  (void)tensor_name(entry, 0, weight, sizeof(weight));
  if (bias_entry != nullptr) (void)tensor_name(*bias_entry, 0, bias, sizeof(bias));
  return load->matrix(out, weight, bias_entry != nullptr ? bias : nullptr, false);
}

const char* named(T entry, char* out) {
  (void)tensor_name(entry, 0, out, kMaxTensorNameLength);
  return out;
}

}  // namespace

Status load_weights(const Model& model, const NetworkOptions& options, RnnWeights* w) {
  const RnnConfig& c = rnn_config(model);
  const uint32_t reverse_layers = c.bidirectional_encoder ? c.layers : 0;
  w->encoder.reset(new (std::nothrow) RnnLayerWeights[c.layers]);
  w->encoder_reverse.reset(new (std::nothrow) RnnLayerWeights[reverse_layers]);
  w->decoder.reset(new (std::nothrow) RnnLayerWeights[c.layers]);
  if (!w->encoder || !w->encoder_reverse || !w->decoder) {
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate the weights of %u layers",
                         c.layers);
  }
  MatrixLoader load(model, options, &w->matrix_bytes);
  char name[kMaxTensorNameLength];
  EDGEMT_RETURN_IF_ERROR(find_embedding_table(model, named(T::kSourceEmbedding, name), &w->source_embedding));
  EDGEMT_RETURN_IF_ERROR(find_embedding_table(model, named(T::kTargetEmbedding, name), &w->target_embedding));
  EDGEMT_RETURN_IF_ERROR(load.prepare());
  w->f16_native = load.f16_native();
  w->int8 = model.weight_dtype() == DType::kI8;
  {
    char weight[kMaxTensorNameLength];
    char bias[kMaxTensorNameLength];
    (void)format_tensor_name(weight, sizeof(weight), "%s.weight", named(T::kOutput, name));
    (void)format_tensor_name(bias, sizeof(bias), "%s.bias", name);
    EDGEMT_RETURN_IF_ERROR(w->head.load(model, &load, weight, bias, nullptr, 0, &w->matrix_bytes));
  }
  if (c.score != RnnScore::kDot) EDGEMT_RETURN_IF_ERROR(matrix(&load, &w->attention_key, T::kAttentionKey, nullptr));
  if (c.score == RnnScore::kAdditive) {
    const T bias = T::kAttentionQueryBias;
    EDGEMT_RETURN_IF_ERROR(matrix(&load, &w->attention_query, T::kAttentionQuery, c.query_bias ? &bias : nullptr));
    EDGEMT_RETURN_IF_ERROR(find_vector(model, named(T::kAttentionV, name), &w->attention_v));
  }
  if (c.output != RnnOutput::kStateContext) {
    const T bias = T::kAttentionCombineBias;
    EDGEMT_RETURN_IF_ERROR(
        matrix(&load, &w->attention_combine, T::kAttentionCombine, c.combine_bias ? &bias : nullptr));
  }
  for (uint32_t l = 0; l < c.layers; ++l) {
    EDGEMT_RETURN_IF_ERROR(linear(&load, &w->encoder[l].ih, T::kEncoderIh, l));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &w->encoder[l].hh, T::kEncoderHh, l));
    if (c.bidirectional_encoder) {
      EDGEMT_RETURN_IF_ERROR(linear(&load, &w->encoder_reverse[l].ih, T::kEncoderIhReverse, l));
      EDGEMT_RETURN_IF_ERROR(linear(&load, &w->encoder_reverse[l].hh, T::kEncoderHhReverse, l));
    }
  }
  for (uint32_t l = 0; l < c.layers; ++l) {
    EDGEMT_RETURN_IF_ERROR(linear(&load, &w->decoder[l].ih, T::kDecoderIh, l));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &w->decoder[l].hh, T::kDecoderHh, l));
  }
  load.finish();
  return Status::ok();
}

}  // namespace edgemt::rnn
