#include "models/transformer/weights.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

#include "models/matrix_loader.h"
#include "models/transformer/tensor_layout.h"

namespace edgemt::transformer {
namespace {

Status norm(const Model& model, NormWeights* out, TransformerTensor entry, uint32_t layer = 0) {
  char prefix[kMaxTensorNameLength];
  (void)tensor_name(entry, layer, prefix, sizeof(prefix));
  char name[kMaxTensorNameLength];
  (void)format_tensor_name(name, sizeof(name), "%s.weight", prefix);
  EDGEMT_RETURN_IF_ERROR(find_vector(model, name, &out->weight));
  (void)format_tensor_name(name, sizeof(name), "%s.bias", prefix);
  return find_vector(model, name, &out->bias);
}

// Creates `out` from a LINEAR table entry: `<prefix>.weight` [out, in]
// (+ `_scale` for int8) and `<prefix>.bias`.
Status linear(MatrixLoader* load, Linear* out, TransformerTensor entry, uint32_t layer,
              bool fused_relu) {
  char prefix[kMaxTensorNameLength];
  (void)tensor_name(entry, layer, prefix, sizeof(prefix));
  return load->linear(out, prefix, fused_relu);
}

// A layer's feed-forward block (entries `first`, `second`): a ReLU one
// through MatrixLoader::relu_block (int8 files: its units reordered for the
// zero-skipping), another as two LINEAR entries.
Status feed_forward(MatrixLoader* load, Linear* in, Linear* out, TransformerTensor first,
                    TransformerTensor second, uint32_t layer, bool relu) {
  if (!relu) {
    EDGEMT_RETURN_IF_ERROR(linear(load, in, first, layer, false));
    return linear(load, out, second, layer, false);
  }
  char first_prefix[kMaxTensorNameLength];
  char second_prefix[kMaxTensorNameLength];
  (void)tensor_name(first, layer, first_prefix, sizeof(first_prefix));
  (void)tensor_name(second, layer, second_prefix, sizeof(second_prefix));
  EDGEMT_RETURN_IF_ERROR(load->relu_block(in, out, first_prefix, second_prefix));
  (void)out->set_sparse_input();
  return Status::ok();
}

}  // namespace

Status load_weights(const Model& model, const NetworkOptions& options, TransformerWeights* w) {
  const TransformerConfig& config = transformer_config(model);
  if (config.encoder_layers > kMaxLayers || config.decoder_layers > kMaxLayers) {
    return Status::error(StatusCode::kUnsupported, "models with more than %zu layers per stack are not supported",
                         kMaxLayers);
  }
  w->encoder.reset(new (std::nothrow) EncoderLayerWeights[config.encoder_layers]);
  w->decoder.reset(new (std::nothrow) DecoderLayerWeights[config.decoder_layers]);
  if (!w->encoder || !w->decoder) {
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate the weights of %u + %u layers",
                         config.encoder_layers, config.decoder_layers);
  }
  MatrixLoader load(model, options, &w->matrix_bytes);
  const bool relu = config.activation == Activation::kRelu;  // fused into ffn.in

  // Names come from the family's table (schema/transformer_tensors.def),
  // the one the verifier walked.
  using T = TransformerTensor;
  char name[kMaxTensorNameLength];
  char bias_name[kMaxTensorNameLength];
  auto named = [](T entry, char* out) {
    (void)tensor_name(entry, 0, out, kMaxTensorNameLength);
    return out;
  };
  EDGEMT_RETURN_IF_ERROR(find_embedding_table(model, named(T::kSourceEmbedding, name), &w->source_embedding));
  EDGEMT_RETURN_IF_ERROR(find_embedding_table(model, named(T::kTargetEmbedding, name), &w->target_embedding));
  EDGEMT_RETURN_IF_ERROR(find_vector(model, named(T::kPositionTable, name), &w->positions));
  EDGEMT_RETURN_IF_ERROR(load.prepare());
  w->f16_native = load.f16_native();
  w->int8 = model.weight_dtype() == DType::kI8;
  const char* output_bias_name = config.output_bias ? named(T::kOutputBias, bias_name) : nullptr;
  kernels::EmbeddingTable* const tables[] = {&w->source_embedding, &w->target_embedding};
  EDGEMT_RETURN_IF_ERROR(w->head.load(model, &load, named(T::kOutputWeight, name), output_bias_name,
                                      tables, 2, &w->matrix_bytes));
  if (config.encoder_final_norm) EDGEMT_RETURN_IF_ERROR(norm(model, &w->encoder_final_norm, T::kEncoderFinalNorm));
  if (config.decoder_final_norm) EDGEMT_RETURN_IF_ERROR(norm(model, &w->decoder_final_norm, T::kDecoderFinalNorm));

  for (uint32_t i = 0; i < config.encoder_layers; ++i) {
    EncoderLayerWeights& layer = w->encoder[i];
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.self_qkv, T::kEncoderSelfQkv, i, false));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.self_out, T::kEncoderSelfOut, i, false));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.self_norm, T::kEncoderSelfNorm, i));
    EDGEMT_RETURN_IF_ERROR(feed_forward(&load, &layer.ffn_in, &layer.ffn_out, T::kEncoderFfnIn,
                                        T::kEncoderFfnOut, i, relu));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.ffn_norm, T::kEncoderFfnNorm, i));
  }
  for (uint32_t i = 0; i < config.decoder_layers; ++i) {
    DecoderLayerWeights& layer = w->decoder[i];
    if (has_ssru_decoder(config)) {
      EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.ssru_gates, T::kDecoderSsruGates, i, false));
      EDGEMT_RETURN_IF_ERROR(norm(model, &layer.ssru_norm, T::kDecoderSsruNorm, i));
    } else {
      EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.self_qkv, T::kDecoderSelfQkv, i, false));
      EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.self_out, T::kDecoderSelfOut, i, false));
      EDGEMT_RETURN_IF_ERROR(norm(model, &layer.self_norm, T::kDecoderSelfNorm, i));
    }
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.cross_q, T::kDecoderCrossQ, i, false));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.cross_kv, T::kDecoderCrossKv, i, false));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.cross_out, T::kDecoderCrossOut, i, false));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.cross_norm, T::kDecoderCrossNorm, i));
    EDGEMT_RETURN_IF_ERROR(feed_forward(&load, &layer.ffn_in, &layer.ffn_out, T::kDecoderFfnIn,
                                        T::kDecoderFfnOut, i, relu));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.ffn_norm, T::kDecoderFfnNorm, i));
  }
  load.finish();
  return Status::ok();
}

}  // namespace edgemt::transformer
