#include "models/transformer/weights.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

#include "models/matrix_loader.h"
#include "models/transformer/tensor_layout.h"

namespace edgemt {
namespace {

Status norm(const Model& model, NormWeights* out, TransformerTensor entry, uint32_t layer = 0) {
  char prefix[kMaxTensorNameLength];
  (void)transformer_tensor_name(entry, layer, prefix, sizeof(prefix));
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
  char weight_name[kMaxTensorNameLength];
  char bias_name[kMaxTensorNameLength];
  (void)transformer_tensor_name(entry, layer, prefix, sizeof(prefix));
  (void)format_tensor_name(weight_name, sizeof(weight_name), "%s.weight", prefix);
  (void)format_tensor_name(bias_name, sizeof(bias_name), "%s.bias", prefix);
  return load->matrix(out, weight_name, bias_name, fused_relu);
}

}  // namespace

Status load_transformer_weights(const Model& model, size_t threads, TransformerWeights* w) {
  const TransformerConfig& config = transformer_config(model);
  if (config.encoder_layers > kMaxLayers || config.decoder_layers > kMaxLayers) {
    return Status::error(StatusCode::kUnsupported, "models with more than %zu layers per stack are not supported",
                         kMaxLayers);
  }
  MatrixLoader load(model, threads, &w->matrix_bytes);
  const bool relu = config.activation == Activation::kRelu;  // fused into ffn.in

  // Names come from the family's table (schema/transformer_tensors.def),
  // the one the verifier walked.
  using T = TransformerTensor;
  char name[kMaxTensorNameLength];
  char bias_name[kMaxTensorNameLength];
  auto named = [](T entry, char* out) {
    (void)transformer_tensor_name(entry, 0, out, kMaxTensorNameLength);
    return out;
  };
  EDGEMT_RETURN_IF_ERROR(find_embedding_table(model, named(T::kSourceEmbedding, name), &w->source_embedding));
  EDGEMT_RETURN_IF_ERROR(find_embedding_table(model, named(T::kTargetEmbedding, name), &w->target_embedding));
  EDGEMT_RETURN_IF_ERROR(find_vector(model, named(T::kPositionTable, name), &w->positions));
  EDGEMT_RETURN_IF_ERROR(load.prepare());
  w->f16_native = load.f16_native();
  const TensorView* output_weight = model.find_tensor(named(T::kOutputWeight, name));
  const bool tied_f32 = output_weight != nullptr && output_weight->dtype == DType::kF32 &&
                        (output_weight->data == w->source_embedding.data ||
                         output_weight->data == w->target_embedding.data);
  const char* output_bias_name = config.output_bias ? named(T::kOutputBias, bias_name) : nullptr;
  if (output_weight != nullptr && output_weight->dtype == DType::kF32 && f32_matrix_on_own_gemm(tied_f32)) {
    // Where MatrixLoader would pack it for the own f32 GEMM: packed later.
    const float* output_bias = nullptr;
    if (output_bias_name != nullptr) EDGEMT_RETURN_IF_ERROR(find_vector(model, output_bias_name, &output_bias));
    EDGEMT_RETURN_IF_ERROR(w->output_rows.create(static_cast<const float*>(output_weight->data), output_bias,
                                                 output_weight->shape[1], output_weight->shape[0]));
    w->output_tensor = output_weight;
    w->output_model = &model;
  } else {
    EDGEMT_RETURN_IF_ERROR(load.matrix(&w->output, named(T::kOutputWeight, name), output_bias_name, false,
                                       tied_f32));
  }
  if (config.encoder_final_norm) EDGEMT_RETURN_IF_ERROR(norm(model, &w->encoder_final_norm, T::kEncoderFinalNorm));
  if (config.decoder_final_norm) EDGEMT_RETURN_IF_ERROR(norm(model, &w->decoder_final_norm, T::kDecoderFinalNorm));

  for (uint32_t i = 0; i < config.encoder_layers; ++i) {
    EncoderLayerWeights& layer = w->encoder[i];
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.self_qkv, T::kEncoderSelfQkv, i, false));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.self_out, T::kEncoderSelfOut, i, false));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.self_norm, T::kEncoderSelfNorm, i));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.ffn_in, T::kEncoderFfnIn, i, relu));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.ffn_out, T::kEncoderFfnOut, i, false));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.ffn_norm, T::kEncoderFfnNorm, i));
  }
  for (uint32_t i = 0; i < config.decoder_layers; ++i) {
    DecoderLayerWeights& layer = w->decoder[i];
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.self_qkv, T::kDecoderSelfQkv, i, false));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.self_out, T::kDecoderSelfOut, i, false));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.self_norm, T::kDecoderSelfNorm, i));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.cross_q, T::kDecoderCrossQ, i, false));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.cross_kv, T::kDecoderCrossKv, i, false));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.cross_out, T::kDecoderCrossOut, i, false));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.cross_norm, T::kDecoderCrossNorm, i));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.ffn_in, T::kDecoderFfnIn, i, relu));
    EDGEMT_RETURN_IF_ERROR(linear(&load, &layer.ffn_out, T::kDecoderFfnOut, i, false));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.ffn_norm, T::kDecoderFfnNorm, i));
  }
  load.finish();
  // A tied output projection on the own int8 GEMM holds the embedding's
  // rows and row scales, packed: the tables read their rows from it (the
  // same values), so the matrix is resident once (f32: pack_output_projection).
  if (output_weight != nullptr && w->output.is_int8()) {
    for (kernels::EmbeddingTable* table : {&w->source_embedding, &w->target_embedding}) {
      if (table->data == output_weight->data && table->dtype == DType::kI8) {
        table->packed_rows = w->output.int8_packed();
      }
    }
  }
  return Status::ok();
}

UnpackedF32Linear releasing_output_rows(const TransformerWeights& w) {
  UnpackedF32Linear rows = w.output_rows;
  rows.set_release(
      [](const void* context, const float* part, size_t floats) {
        const TransformerWeights& weights = *static_cast<const TransformerWeights*>(context);
        TensorView view = *weights.output_tensor;
        view.data = part;
        view.size_bytes = floats * sizeof(float);
        weights.output_model->release_tensor_pages(view);
      },
      &w);
  return rows;
}

Status pack_output_projection(TransformerWeights* w) {
  if (w->output_rows.empty() || w->output.out_features() != 0) return Status::ok();
  // Packed a part at a time, each part's file pages released once packed:
  // the matrix is never resident twice, not even while packing.
  const UnpackedF32Linear rows = releasing_output_rows(*w);
  const Status packed = w->output.create_packed_f32(rows);
  if (!packed.is_ok()) {
    return Status::error(packed.code(), "tensor '%s': %s", w->output_tensor->name, packed.message());
  }
  w->matrix_bytes += w->output.packed_bytes();
  // A tied one: the tables read their rows from the pack (the same values),
  // so the matrix is resident once.
  for (kernels::EmbeddingTable* table : {&w->source_embedding, &w->target_embedding}) {
    if (table->data == rows.weight() && table->dtype == DType::kF32) {
      table->packed_f32_rows = w->output.f32_packed();
    }
  }
  w->output_model->release_tensor_pages(*w->output_tensor);  // the pages parts shared
  return Status::ok();
}

}  // namespace edgemt
