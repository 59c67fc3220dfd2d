#include "models/transformer/weights.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

#include "core/cpu_features.h"
#include "core/prefaulted_memory.h"
#include "models/transformer/tensor_layout.h"
#include "kernels/f32_gemm.h"
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

Status vector(const Model& model, const float** out, const char* name);

// An I8 matrix's row scales: `<name>_scale` [rows].
Status row_scales(const Model& model, const char* matrix_name, const float** out) {
  char name[kMaxTensorNameLength];
  (void)format_tensor_name(name, sizeof(name), "%s_scale", matrix_name);
  return vector(model, out, name);
}

Status embedding_table(const Model& model, const char* name, kernels::EmbeddingTable* table) {
  const TensorView* tensor = nullptr;
  EDGEMT_RETURN_IF_ERROR(find(model, &tensor, name));
  table->data = tensor->data;
  table->dtype = tensor->dtype;
  table->dim = tensor->shape[1];
  if (tensor->dtype == DType::kI8) EDGEMT_RETURN_IF_ERROR(row_scales(model, name, &table->row_scale));
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

Status norm(const Model& model, NormWeights* out, TransformerTensor entry, uint32_t layer = 0) {
  char prefix[kMaxTensorNameLength];
  (void)transformer_tensor_name(entry, layer, prefix, sizeof(prefix));
  char name[kMaxTensorNameLength];
  (void)format_tensor_name(name, sizeof(name), "%s.weight", prefix);
  EDGEMT_RETURN_IF_ERROR(vector(model, &out->weight, name));
  (void)format_tensor_name(name, sizeof(name), "%s.bias", prefix);
  return vector(model, &out->bias, name);
}

// What every matrix of one model is loaded with.
struct MatrixLoader {
  const Model& model;
  TransformerWeights* weights;
  size_t threads;     // run-phase threads (column blocks of XNNPACK Linears)
  bool relu;          // the FFN activation is ReLU (fused into ffn.in)
  bool f16_native;    // f16 matrices go to XNNPACK's f16 GEMM as they are
  float* widen = nullptr;  // otherwise they are widened here: [largest matrix]

  // Creates `out` from a LINEAR table entry: `<prefix>.weight` [out, in]
  // (+ `_scale` for int8) and `<prefix>.bias`.
  Status linear(Linear* out, TransformerTensor entry, uint32_t layer, bool fused_relu) {
    char prefix[kMaxTensorNameLength];
    char weight_name[kMaxTensorNameLength];
    char bias_name[kMaxTensorNameLength];
    (void)transformer_tensor_name(entry, layer, prefix, sizeof(prefix));
    (void)format_tensor_name(weight_name, sizeof(weight_name), "%s.weight", prefix);
    (void)format_tensor_name(bias_name, sizeof(bias_name), "%s.bias", prefix);
    return matrix(out, weight_name, bias_name, fused_relu);
  }

  // An f32 matrix [rows, in] goes to the own f32 GEMM where it beats XNNPACK
  // on this CPU, and a tied output projection wherever there is a fast own
  // kernel (its pack then serves the embedding rows); XNNPACK otherwise.
  Status f32_matrix(Linear* out, const float* weight, const float* bias, size_t in, size_t rows,
                    bool fused_relu, bool serves_embedding) {
    namespace f32 = kernels::f32;
    if (f32::replaces_xnnpack() || (serves_embedding && f32::fast_gemm_kernel() != nullptr)) {
      return out->create_packed_f32(weight, bias, in, rows, fused_relu);
    }
    return out->create(weight, bias, in, rows, fused_relu, threads);
  }

  // Creates `out` from matrix `weight_name` [out, in] (+ `_scale` for int8)
  // and vector `bias_name` (nullptr: none).
  // serves_embedding: the matrix is also an f32 embedding table (a tied
  // output projection); it goes to the own f32 GEMM where this CPU has a
  // fast kernel for it, whose pack the table then reads rows from.
  Status matrix(Linear* out, const char* weight_name, const char* bias_name, bool fused_relu,
                bool serves_embedding = false) {
    const TensorView* weight = nullptr;
    EDGEMT_RETURN_IF_ERROR(find(model, &weight, weight_name));
    const float* bias = nullptr;
    if (bias_name != nullptr) EDGEMT_RETURN_IF_ERROR(vector(model, &bias, bias_name));
    const size_t in = weight->shape[1], rows = weight->shape[0];
    Status created = Status::ok();
    switch (weight->dtype) {
      case DType::kI8: {  // own int8 GEMM, packed from the file's bytes
        const float* scale = nullptr;
        EDGEMT_RETURN_IF_ERROR(row_scales(model, weight->name, &scale));
        created = out->create_int8(static_cast<const int8_t*>(weight->data), scale, bias, in, rows,
                                   fused_relu);
        break;
      }
      case DType::kF16:
        if (f16_native) {
          created = out->create_f16(static_cast<const uint16_t*>(weight->data), bias, in, rows,
                                    fused_relu, threads);
          break;
        }
        // Widened into one reused buffer (fresh memory per matrix would
        // page-fault 4 bytes per weight again every time); the GEMM packs its
        // own copy, so the buffer is free again right after.
        kernels::f16_to_f32_array(static_cast<const uint16_t*>(weight->data), widen,
                                  weight->element_count());
        created = f32_matrix(out, widen, bias, in, rows, fused_relu, false);
        break;
      case DType::kF32:
        created = f32_matrix(out, static_cast<const float*>(weight->data), bias, in, rows,
                             fused_relu, serves_embedding);
        break;
    }
    if (!created.is_ok()) {
      return Status::error(created.code(), "tensor '%s': %s", weight->name, created.message());
    }
    weights->matrix_bytes += out->packed_bytes();
    // Packed: the file pages go (weights are never resident twice, not even
    // while loading). A tied output projection's tensor is also the embedding
    // table, read in place: its rows fault back in as tokens are looked up.
    model.release_tensor_pages(*weight);
    return Status::ok();
  }
};

// True when this CPU has fp16 arithmetic and XNNPACK an f16 GEMM for it
// (tried on a 1x1 matrix, so the answer is XNNPACK's own).
bool f16_gemm_is_native() {
  if (!cpu_features().fp16_arith) return false;
  const uint16_t one = 0x3C00;  // 1.0 in half
  Linear probe;
  return probe.create_f16(&one, nullptr, 1, 1, false).is_ok();
}

}  // namespace

Status load_transformer_weights(const Model& model, size_t threads, TransformerWeights* w) {
  const TransformerConfig& config = transformer_config(model);
  if (config.encoder_layers > kMaxLayers || config.decoder_layers > kMaxLayers) {
    return Status::error(StatusCode::kUnsupported, "models with more than %zu layers per stack are not supported",
                         kMaxLayers);
  }
  MatrixLoader load{model, w, threads, config.activation == Activation::kRelu, false, nullptr};

  // Names come from the family's table (schema/transformer_tensors.def),
  // the one the verifier walked.
  using T = TransformerTensor;
  char name[kMaxTensorNameLength];
  char bias_name[kMaxTensorNameLength];
  auto named = [](T entry, char* out) {
    (void)transformer_tensor_name(entry, 0, out, kMaxTensorNameLength);
    return out;
  };
  EDGEMT_RETURN_IF_ERROR(embedding_table(model, named(T::kSourceEmbedding, name), &w->source_embedding));
  EDGEMT_RETURN_IF_ERROR(embedding_table(model, named(T::kTargetEmbedding, name), &w->target_embedding));
  EDGEMT_RETURN_IF_ERROR(vector(model, &w->positions, named(T::kPositionTable, name)));

  // f16 matrices run natively on CPUs with fp16 arithmetic when XNNPACK
  // has f16 GEMMs for them; otherwise they are widened to f32 through one
  // buffer as large as the largest matrix. Prefaulted: the output
  // projection, widened first, is usually that largest matrix and fills it;
  // the buffer is freed at the end of the load.
  struct FreePrefaulted {
    void operator()(float* p) const { free_prefaulted(p); }
  };
  std::unique_ptr<float, FreePrefaulted> widen;
  if (model.weight_dtype() == DType::kF16) {
    load.f16_native = f16_gemm_is_native();
    if (!load.f16_native) {
      size_t largest = 0;
      for (size_t i = 0; i < model.tensor_count(); ++i) {
        if (model.tensor(i).rank == 2) largest = std::max<size_t>(largest, model.tensor(i).element_count());
      }
      widen.reset(static_cast<float*>(allocate_prefaulted(alignof(float), largest * sizeof(float))));
      if (!widen) {
        return Status::error(StatusCode::kOutOfMemory, "cannot allocate %zu floats to widen f16 weights",
                             largest);
      }
      load.widen = widen.get();
    }
  }
  w->f16_native = load.f16_native;
  const TensorView* output_weight = model.find_tensor(named(T::kOutputWeight, name));
  const bool tied_f32 = output_weight != nullptr && output_weight->dtype == DType::kF32 &&
                        (output_weight->data == w->source_embedding.data ||
                         output_weight->data == w->target_embedding.data);
  EDGEMT_RETURN_IF_ERROR(load.matrix(&w->output, named(T::kOutputWeight, name),
                                     config.output_bias ? named(T::kOutputBias, bias_name) : nullptr,
                                     false, tied_f32));
  if (config.encoder_final_norm) EDGEMT_RETURN_IF_ERROR(norm(model, &w->encoder_final_norm, T::kEncoderFinalNorm));
  if (config.decoder_final_norm) EDGEMT_RETURN_IF_ERROR(norm(model, &w->decoder_final_norm, T::kDecoderFinalNorm));

  for (uint32_t i = 0; i < config.encoder_layers; ++i) {
    EncoderLayerWeights& layer = w->encoder[i];
    EDGEMT_RETURN_IF_ERROR(load.linear(&layer.self_qkv, T::kEncoderSelfQkv, i, false));
    EDGEMT_RETURN_IF_ERROR(load.linear(&layer.self_out, T::kEncoderSelfOut, i, false));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.self_norm, T::kEncoderSelfNorm, i));
    EDGEMT_RETURN_IF_ERROR(load.linear(&layer.ffn_in, T::kEncoderFfnIn, i, load.relu));
    EDGEMT_RETURN_IF_ERROR(load.linear(&layer.ffn_out, T::kEncoderFfnOut, i, false));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.ffn_norm, T::kEncoderFfnNorm, i));
  }
  for (uint32_t i = 0; i < config.decoder_layers; ++i) {
    DecoderLayerWeights& layer = w->decoder[i];
    EDGEMT_RETURN_IF_ERROR(load.linear(&layer.self_qkv, T::kDecoderSelfQkv, i, false));
    EDGEMT_RETURN_IF_ERROR(load.linear(&layer.self_out, T::kDecoderSelfOut, i, false));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.self_norm, T::kDecoderSelfNorm, i));
    EDGEMT_RETURN_IF_ERROR(load.linear(&layer.cross_q, T::kDecoderCrossQ, i, false));
    EDGEMT_RETURN_IF_ERROR(load.linear(&layer.cross_kv, T::kDecoderCrossKv, i, false));
    EDGEMT_RETURN_IF_ERROR(load.linear(&layer.cross_out, T::kDecoderCrossOut, i, false));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.cross_norm, T::kDecoderCrossNorm, i));
    EDGEMT_RETURN_IF_ERROR(load.linear(&layer.ffn_in, T::kDecoderFfnIn, i, load.relu));
    EDGEMT_RETURN_IF_ERROR(load.linear(&layer.ffn_out, T::kDecoderFfnOut, i, false));
    EDGEMT_RETURN_IF_ERROR(norm(model, &layer.ffn_norm, T::kDecoderFfnNorm, i));
  }
  // A tied output projection on the own int8 or f32 GEMM holds the
  // embedding's rows (and int8 row scales), packed: the tables read their
  // rows from it (the same values), so the matrix is resident once.
  if (output_weight != nullptr) {
    for (kernels::EmbeddingTable* table : {&w->source_embedding, &w->target_embedding}) {
      if (table->data != output_weight->data) continue;
      if (table->dtype == DType::kI8 && w->output.is_int8()) table->packed_rows = w->output.int8_packed();
      if (table->dtype == DType::kF32 && w->output.is_packed_f32()) {
        table->packed_f32_rows = w->output.f32_packed();
      }
    }
  }
  return Status::ok();
}

}  // namespace edgemt
