#include "layers/transformer_weights.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

#include "format/tensor_layout.h"
#include "kernels/fp16.h"

namespace edgemt {
namespace {

// Finds a tensor by name. A verified model has every tensor its config
// implies, so a miss here is a verifier/loader mismatch.
Status find(const Model& model, const TensorView** out, const char* name) {
  *out = model.find_tensor(name);
  if (*out == nullptr) {
    return Status::error(StatusCode::kInvalidModel, "model has no tensor '%s'", name);
  }
  return Status::ok();
}

Status embedding_table(const Model& model, const char* name, kernels::EmbeddingTable* table) {
  const TensorView* tensor = nullptr;
  EDGEMT_RETURN_IF_ERROR(find(model, &tensor, name));
  if (tensor->dtype == DType::kI8) {
    return Status::error(StatusCode::kUnsupported, "tensor '%s' has dtype %s, which this build cannot run",
                         tensor->name, dtype_name(tensor->dtype));
  }
  table->data = tensor->data;
  table->dtype = tensor->dtype;
  table->dim = tensor->shape[1];
  return Status::ok();
}

Status vector(const Model& model, const float** out, const char* name) {
  const TensorView* tensor = nullptr;
  EDGEMT_RETURN_IF_ERROR(find(model, &tensor, name));
  if (tensor->dtype != DType::kF32) {
    return Status::error(StatusCode::kInvalidModel, "tensor '%s' must be f32", name);
  }
  *out = static_cast<const float*>(tensor->data);
  return Status::ok();
}

Status norm(const Model& model, NormWeights* out, const char* prefix) {
  char name[kMaxTensorNameLength];
  (void)format_tensor_name(name, sizeof(name), "%s.weight", prefix);
  EDGEMT_RETURN_IF_ERROR(vector(model, &out->weight, name));
  (void)format_tensor_name(name, sizeof(name), "%s.bias", prefix);
  return vector(model, &out->bias, name);
}

// Creates `linear` from `<prefix>.weight` [out, in] and `<prefix>.bias`.
// Drops `tensor`'s file pages from resident memory once its bytes have been
// copied (packed by XNNPACK), unless the runtime reads them in place (an
// embedding table, which a tied output aliases), so weights are never
// resident twice, not even while loading.
void release_unless_in_place(const Model& model, const TensorView& tensor,
                             const TransformerWeights& w) {
  if (tensor.data == w.source_embedding.data || tensor.data == w.target_embedding.data) return;
  model.release_tensor_pages(tensor);
}

Status linear(const Model& model, Linear* out, const char* prefix, bool relu, bool has_bias,
              const TransformerWeights& w, float* scratch, size_t* matrix_bytes) {
  const TensorView* weight = nullptr;
  char name[kMaxTensorNameLength];
  (void)format_tensor_name(name, sizeof(name), "%s.weight", prefix);
  EDGEMT_RETURN_IF_ERROR(find(model, &weight, name));
  const float* bias = nullptr;
  if (has_bias) {
    (void)format_tensor_name(name, sizeof(name), "%s.bias", prefix);
    EDGEMT_RETURN_IF_ERROR(vector(model, &bias, name));
  }
  // f16 matrices are widened into one reused scratch buffer (fresh memory
  // per matrix would page-fault 4 bytes per weight again every time);
  // XNNPACK packs its own copy, so the scratch is free again right after.
  const float* data = static_cast<const float*>(weight->data);
  if (weight->dtype == DType::kF16) {
    kernels::f16_to_f32_array(static_cast<const uint16_t*>(weight->data), scratch,
                              weight->element_count());
    data = scratch;
  } else if (weight->dtype != DType::kF32) {
    return Status::error(StatusCode::kUnsupported, "tensor '%s' has dtype %s, which this build cannot run",
                         weight->name, dtype_name(weight->dtype));
  }
  *matrix_bytes += weight->element_count() * sizeof(float);
  EDGEMT_RETURN_IF_ERROR(out->create(data, bias, weight->shape[1], weight->shape[0], relu));
  release_unless_in_place(model, *weight, w);
  return Status::ok();
}

}  // namespace

Status load_transformer_weights(const Model& model, TransformerWeights* w) {
  const TransformerConfig& config = model.config();
  if (config.encoder_layers > kMaxLayers || config.decoder_layers > kMaxLayers) {
    return Status::error(StatusCode::kUnsupported, "models with more than %zu layers per stack are not supported",
                         kMaxLayers);
  }
  const bool relu = config.activation == Activation::kRelu;
  size_t* bytes = &w->matrix_bytes_f32;

  EDGEMT_RETURN_IF_ERROR(embedding_table(model, "embedding.source", &w->source_embedding));
  EDGEMT_RETURN_IF_ERROR(embedding_table(model, "embedding.target", &w->target_embedding));
  EDGEMT_RETURN_IF_ERROR(vector(model, &w->positions, "position.table"));

  // Widening scratch for f16 matrices: as large as the largest one.
  std::unique_ptr<float[]> scratch_storage;
  float* scratch = nullptr;
  if (model.weight_dtype() == DType::kF16) {
    size_t largest = 0;
    for (size_t i = 0; i < model.tensor_count(); ++i) {
      if (model.tensor(i).rank == 2) largest = std::max<size_t>(largest, model.tensor(i).element_count());
    }
    scratch_storage.reset(new (std::nothrow) float[largest]);
    if (!scratch_storage) {
      return Status::error(StatusCode::kOutOfMemory, "cannot allocate %zu floats to widen f16 weights",
                           largest);
    }
    scratch = scratch_storage.get();
  }
  EDGEMT_RETURN_IF_ERROR(linear(model, &w->output, "output", false, config.output_bias, *w, scratch, bytes));
  if (config.encoder_final_norm) EDGEMT_RETURN_IF_ERROR(norm(model, &w->encoder_final_norm, "encoder.final_norm"));
  if (config.decoder_final_norm) EDGEMT_RETURN_IF_ERROR(norm(model, &w->decoder_final_norm, "decoder.final_norm"));

  char prefix[kMaxTensorNameLength];
  for (uint32_t i = 0; i < config.encoder_layers; ++i) {
    EncoderLayerWeights& layer = w->encoder[i];
    auto name = [&](const char* part) {
      (void)format_tensor_name(prefix, sizeof(prefix), "encoder.layers.%u.%s", i, part);
      return prefix;
    };
    EDGEMT_RETURN_IF_ERROR(linear(model, &layer.self_qkv, name("self_attn.qkv"), false, true, *w, scratch, bytes));
    EDGEMT_RETURN_IF_ERROR(linear(model, &layer.self_out, name("self_attn.out"), false, true, *w, scratch, bytes));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.self_norm, name("self_attn_norm")));
    EDGEMT_RETURN_IF_ERROR(linear(model, &layer.ffn_in, name("ffn.in"), relu, true, *w, scratch, bytes));
    EDGEMT_RETURN_IF_ERROR(linear(model, &layer.ffn_out, name("ffn.out"), false, true, *w, scratch, bytes));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.ffn_norm, name("ffn_norm")));
  }
  for (uint32_t i = 0; i < config.decoder_layers; ++i) {
    DecoderLayerWeights& layer = w->decoder[i];
    auto name = [&](const char* part) {
      (void)format_tensor_name(prefix, sizeof(prefix), "decoder.layers.%u.%s", i, part);
      return prefix;
    };
    EDGEMT_RETURN_IF_ERROR(linear(model, &layer.self_qkv, name("self_attn.qkv"), false, true, *w, scratch, bytes));
    EDGEMT_RETURN_IF_ERROR(linear(model, &layer.self_out, name("self_attn.out"), false, true, *w, scratch, bytes));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.self_norm, name("self_attn_norm")));
    EDGEMT_RETURN_IF_ERROR(linear(model, &layer.cross_q, name("cross_attn.q"), false, true, *w, scratch, bytes));
    EDGEMT_RETURN_IF_ERROR(linear(model, &layer.cross_kv, name("cross_attn.kv"), false, true, *w, scratch, bytes));
    EDGEMT_RETURN_IF_ERROR(linear(model, &layer.cross_out, name("cross_attn.out"), false, true, *w, scratch, bytes));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.cross_norm, name("cross_attn_norm")));
    EDGEMT_RETURN_IF_ERROR(linear(model, &layer.ffn_in, name("ffn.in"), relu, true, *w, scratch, bytes));
    EDGEMT_RETURN_IF_ERROR(linear(model, &layer.ffn_out, name("ffn.out"), false, true, *w, scratch, bytes));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.ffn_norm, name("ffn_norm")));
  }
  return Status::ok();
}

}  // namespace edgemt
