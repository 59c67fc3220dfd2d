#include "models/matrix_loader.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "core/cpu_features.h"
#include "core/prefaulted_memory.h"
#include "kernels/f32_gemm.h"
#include "kernels/fp16.h"
#include "models/expected_tensor.h"
#include "models/relu_units.h"

namespace edgemt {
namespace {

// An I8 projection's smoothing vector `<name>_smooth` [in] in a smoothed
// file (the verifier checked that every projection that owns its bytes has
// one); nullptr otherwise.
Status smoothing_vector(const Model& model, const char* matrix_name, const float** out) {
  *out = nullptr;
  if (model.quantization() != QuantizationScheme::kInt8SmoothedPerRowDynamic) return Status::ok();
  char name[kMaxTensorNameLength];
  (void)format_tensor_name(name, sizeof(name), "%s_smooth", matrix_name);
  if (model.find_tensor(name) == nullptr) return Status::ok();  // an embedding table, or an alias
  return find_vector(model, name, out);
}

// An I8 projection's fixed activation multiplier `<name>_input_scale` [1]
// in an Int8PerTensorStatic file; 0 (none) otherwise.
Status input_scale(const Model& model, const char* matrix_name, float* out) {
  *out = 0.0f;
  if (model.quantization() != QuantizationScheme::kInt8PerTensorStatic) return Status::ok();
  char name[kMaxTensorNameLength];
  (void)format_tensor_name(name, sizeof(name), "%s_input_scale", matrix_name);
  if (model.find_tensor(name) == nullptr) return Status::ok();  // an alias
  const float* value = nullptr;
  EDGEMT_RETURN_IF_ERROR(find_vector(model, name, &value));
  *out = value[0];
  return Status::ok();
}

// True when this CPU has fp16 arithmetic and XNNPACK an f16 GEMM for it
// (tried on a 1x1 matrix, so the answer is XNNPACK's own).
bool f16_gemm_is_native() {
  if (!cpu_features().fp16_arith) return false;
  const uint16_t one = 0x3C00;  // 1.0 in half
  Linear probe;
  return probe.create_f16(&one, nullptr, 1, 1, false).is_ok();
}

}  // namespace

Status find_tensor(const Model& model, const char* name, const TensorView** out) {
  *out = model.find_tensor(name);
  if (*out == nullptr) {
    return Status::error(StatusCode::kInvalidModel, "model has no tensor '%s'", name);
  }
  return Status::ok();
}

Status find_vector(const Model& model, const char* name, const float** out) {
  const TensorView* tensor = nullptr;
  EDGEMT_RETURN_IF_ERROR(find_tensor(model, name, &tensor));
  if (tensor->dtype != DType::kF32) {
    return Status::error(StatusCode::kInvalidModel, "tensor '%s' must be f32", name);
  }
  *out = static_cast<const float*>(tensor->data);
  return Status::ok();
}

namespace {

// An I8 table's residual codes and their row scales in a file with
// residual_tables: the table's own, or, for a table that shares another's
// bytes (a shared target embedding), the owner's. Only an owner of the
// table's shape: a file may point tensors of other shapes at its bytes.
Status residual_codes(const Model& model, const TensorView& table, kernels::EmbeddingTable* out) {
  for (size_t i = 0; i < model.tensor_count(); ++i) {
    const TensorView& owner = model.tensor(i);
    if (owner.data != table.data || owner.dtype != DType::kI8 || owner.rank != 2) continue;
    if (owner.shape[0] != table.shape[0] || owner.shape[1] != table.shape[1]) continue;
    char name[kMaxTensorNameLength];
    (void)format_tensor_name(name, sizeof(name), "%s_residual", owner.name);
    const TensorView* residual = model.find_tensor(name);
    if (residual == nullptr) continue;  // a projection sharing the bytes
    out->residual = static_cast<const uint8_t*>(residual->data);
    (void)format_tensor_name(name, sizeof(name), "%s_residual_scale", owner.name);
    return find_vector(model, name, &out->residual_scale);
  }
  return Status::error(StatusCode::kInvalidModel, "embedding table '%s' has no residual codes",
                       table.name);
}

}  // namespace

Status find_row_scales(const Model& model, const char* matrix_name, const float** out) {
  char name[kMaxTensorNameLength];
  (void)format_tensor_name(name, sizeof(name), "%s_scale", matrix_name);
  return find_vector(model, name, out);
}

Status find_embedding_table(const Model& model, const char* name, kernels::EmbeddingTable* table) {
  const TensorView* tensor = nullptr;
  EDGEMT_RETURN_IF_ERROR(find_tensor(model, name, &tensor));
  table->data = tensor->data;
  table->dtype = tensor->dtype;
  table->vocab = tensor->shape[0];
  table->dim = tensor->shape[1];
  if (tensor->dtype == DType::kI8) EDGEMT_RETURN_IF_ERROR(find_row_scales(model, name, &table->row_scale));
  if (tensor->dtype == DType::kI8 && model.residual_tables()) {
    EDGEMT_RETURN_IF_ERROR(residual_codes(model, *tensor, table));
  }
  return Status::ok();
}

void MatrixLoader::FreePrefaulted::operator()(void* p) const { free_prefaulted(p); }

Status MatrixLoader::reorder_room(size_t bytes) {
  if (bytes <= reorder_bytes_) return Status::ok();
  reorder_.reset(static_cast<unsigned char*>(allocate_prefaulted(alignof(double), bytes)));
  if (!reorder_) {
    reorder_bytes_ = 0;
    return Status::error(StatusCode::kOutOfMemory,
                         "cannot allocate %zu bytes to reorder ReLU units", bytes);
  }
  reorder_bytes_ = bytes;
  return Status::ok();
}

Status MatrixLoader::prepare() {
  if (model_.weight_dtype() != DType::kF16) return Status::ok();
  // f16 matrices run natively on CPUs with fp16 arithmetic when XNNPACK has
  // f16 GEMMs for them; otherwise they are widened to f32 through one
  // buffer as large as the largest matrix. Prefaulted: the output
  // projection, widened first, is usually that largest matrix and fills it.
  f16_native_ = f16_gemm_is_native();
  if (f16_native_) return Status::ok();
  size_t largest = 0;
  for (size_t i = 0; i < model_.tensor_count(); ++i) {
    if (model_.tensor(i).rank == 2) largest = std::max<size_t>(largest, model_.tensor(i).element_count());
  }
  widen_.reset(static_cast<float*>(allocate_prefaulted(alignof(float), largest * sizeof(float))));
  if (!widen_) {
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate %zu floats to widen f16 weights",
                         largest);
  }
  return Status::ok();
}

// An f32 matrix [rows, in] goes to the own f32 GEMM where it beats XNNPACK
// on this CPU, and a tied output projection wherever there is a fast own
// kernel (its pack then serves the embedding rows); XNNPACK otherwise.
bool f32_matrix_on_own_gemm(bool serves_embedding) {
  namespace f32 = kernels::f32;
  return f32::replaces_xnnpack() || (serves_embedding && f32::fast_gemm_kernel() != nullptr);
}

Status MatrixLoader::f32_matrix(Linear* out, const float* weight, const float* bias, size_t in,
                                size_t rows, bool fused_relu, bool serves_embedding) {
  if (f32_matrix_on_own_gemm(serves_embedding)) {
    return out->create_packed_f32(weight, bias, in, rows, fused_relu);
  }
  return out->create(weight, bias, in, rows, fused_relu, threads_);
}

Status MatrixLoader::linear(Linear* out, const char* prefix, bool fused_relu) {
  char weight[kMaxTensorNameLength];
  char bias[kMaxTensorNameLength];
  if (!format_tensor_name(weight, sizeof(weight), "%s.weight", prefix) ||
      !format_tensor_name(bias, sizeof(bias), "%s.bias", prefix)) {
    return Status::error(StatusCode::kInvalidModel, "tensor name too long: %s", prefix);
  }
  return matrix(out, weight, bias, fused_relu);
}

Status MatrixLoader::int8_matrix(Linear* out, const TensorView& weight, const int8_t* codes,
                                 const float* scale, const float* bias, const float* smoothing,
                                 bool fused_relu) {
  float fixed_range = 0.0f;
  EDGEMT_RETURN_IF_ERROR(input_scale(model_, weight.name, &fixed_range));
  // Marian's sums only where Marian's arithmetic is (the per-tensor schemes).
  const bool tensor_range = model_.quantization() == QuantizationScheme::kInt8PerTensorDynamic;
  const int32_t lanes = tensor_range || fixed_range != 0.0f ? marian_lanes_ : 0;
  const Status created = out->create_int8(codes, scale, bias, weight.shape[1], weight.shape[0],
                                          fused_relu, smoothing, tensor_range, fixed_range, lanes);
  if (!created.is_ok()) {
    return Status::error(created.code(), "tensor '%s': %s", weight.name, created.message());
  }
  *matrix_bytes_ += out->packed_bytes();
  model_.release_tensor_pages(weight);  // packed: the file pages go
  return Status::ok();
}

Status MatrixLoader::relu_block(Linear* first, Linear* second, const char* first_prefix,
                                const char* second_prefix) {
  char names[4][kMaxTensorNameLength];
  if (!format_tensor_name(names[0], kMaxTensorNameLength, "%s.weight", first_prefix) ||
      !format_tensor_name(names[1], kMaxTensorNameLength, "%s.bias", first_prefix) ||
      !format_tensor_name(names[2], kMaxTensorNameLength, "%s.weight", second_prefix) ||
      !format_tensor_name(names[3], kMaxTensorNameLength, "%s.bias", second_prefix)) {
    return Status::error(StatusCode::kInvalidModel, "tensor name too long: %s", first_prefix);
  }
  const TensorView* in = nullptr;
  const TensorView* out = nullptr;
  EDGEMT_RETURN_IF_ERROR(find_tensor(model_, names[0], &in));
  EDGEMT_RETURN_IF_ERROR(find_tensor(model_, names[2], &out));
  const bool reorder = order_relu_units_ && marian_lanes_ == 0 && in->dtype == DType::kI8 &&
                       out->dtype == DType::kI8 && out->shape[1] == in->shape[0];
  if (!reorder) {
    EDGEMT_RETURN_IF_ERROR(matrix(first, names[0], names[1], true));
    return matrix(second, names[2], names[3], false);
  }
  const size_t units = in->shape[0], depth = in->shape[1], outputs = out->shape[0];
  const float *in_scale = nullptr, *in_bias = nullptr, *in_smoothing = nullptr;
  const float *out_scale = nullptr, *out_bias = nullptr, *out_smoothing = nullptr;
  EDGEMT_RETURN_IF_ERROR(find_row_scales(model_, in->name, &in_scale));
  EDGEMT_RETURN_IF_ERROR(find_vector(model_, names[1], &in_bias));
  EDGEMT_RETURN_IF_ERROR(smoothing_vector(model_, names[0], &in_smoothing));
  EDGEMT_RETURN_IF_ERROR(find_row_scales(model_, out->name, &out_scale));
  EDGEMT_RETURN_IF_ERROR(find_vector(model_, names[3], &out_bias));
  EDGEMT_RETURN_IF_ERROR(smoothing_vector(model_, names[2], &out_smoothing));
  // Load-time copies in the new order (packed, then the next block's):
  // scores [units] double, order [units], scale | bias | smoothing [3 units]
  // float, the first's codes [units, depth], the second's [outputs, units].
  const size_t vector_offset = units * (sizeof(double) + sizeof(uint32_t));
  const size_t code_offset = vector_offset + 3 * units * sizeof(float);
  EDGEMT_RETURN_IF_ERROR(reorder_room(code_offset + units * depth + outputs * units));
  unsigned char* room = reorder_.get();
  double* scores = reinterpret_cast<double*>(room);
  uint32_t* order = reinterpret_cast<uint32_t*>(room + units * sizeof(double));
  float* vectors = reinterpret_cast<float*>(room + vector_offset);
  const int8_t* in_codes = static_cast<const int8_t*>(in->data);
  const int8_t* out_codes = static_cast<const int8_t*>(out->data);
  relu_unit_order(in_codes, in_scale, in_bias, units, depth, order, scores);
  int8_t* first_codes = reinterpret_cast<int8_t*>(room + code_offset);  // [units, depth]
  int8_t* second_codes = first_codes + units * depth;  // [outputs, units]
  float* first_scale = vectors;
  float* first_bias = vectors + units;
  float* second_smoothing = out_smoothing != nullptr ? vectors + 2 * units : nullptr;
  for (size_t j = 0; j < units; ++j) {
    const size_t unit = order[j];
    std::memcpy(first_codes + j * depth, in_codes + unit * depth, depth);
    first_scale[j] = in_scale[unit];
    first_bias[j] = in_bias[unit];
    if (second_smoothing != nullptr) second_smoothing[j] = out_smoothing[unit];
  }
  for (size_t n = 0; n < outputs; ++n) {
    for (size_t j = 0; j < units; ++j) second_codes[n * units + j] = out_codes[n * units + order[j]];
  }
  EDGEMT_RETURN_IF_ERROR(
      int8_matrix(first, *in, first_codes, first_scale, first_bias, in_smoothing, true));
  return int8_matrix(second, *out, second_codes, out_scale, out_bias, second_smoothing, false);
}

Status MatrixLoader::matrix(Linear* out, const char* weight_name, const char* bias_name,
                            bool fused_relu, bool serves_embedding) {
  const TensorView* weight = nullptr;
  EDGEMT_RETURN_IF_ERROR(find_tensor(model_, weight_name, &weight));
  const float* bias = nullptr;
  if (bias_name != nullptr) EDGEMT_RETURN_IF_ERROR(find_vector(model_, bias_name, &bias));
  const size_t in = weight->shape[1], rows = weight->shape[0];
  Status created = Status::ok();
  switch (weight->dtype) {
    case DType::kI8: {  // own int8 GEMM, packed from the file's bytes
      const float* scale = nullptr;
      const float* smoothing = nullptr;
      EDGEMT_RETURN_IF_ERROR(find_row_scales(model_, weight->name, &scale));
      EDGEMT_RETURN_IF_ERROR(smoothing_vector(model_, weight_name, &smoothing));
      return int8_matrix(out, *weight, static_cast<const int8_t*>(weight->data), scale, bias,
                         smoothing, fused_relu);
    }
    case DType::kF16:
      if (f16_native_) {
        created = out->create_f16(static_cast<const uint16_t*>(weight->data), bias, in, rows,
                                  fused_relu, threads_);
        break;
      }
      // Widened into one reused buffer (fresh memory per matrix would
      // page-fault 4 bytes per weight again every time); the GEMM packs its
      // own copy, so the buffer is free again right after.
      kernels::f16_to_f32_array(static_cast<const uint16_t*>(weight->data), widen_.get(),
                                weight->element_count());
      created = f32_matrix(out, widen_.get(), bias, in, rows, fused_relu, false);
      break;
    case DType::kF32:
      created = f32_matrix(out, static_cast<const float*>(weight->data), bias, in, rows, fused_relu,
                           serves_embedding);
      break;
  }
  if (!created.is_ok()) {
    return Status::error(created.code(), "tensor '%s': %s", weight->name, created.message());
  }
  *matrix_bytes_ += out->packed_bytes();
  // Packed: the file pages go (weights are never resident twice, not even
  // while loading). A tied output projection's tensor is also the embedding
  // table, read in place: its rows fault back in as tokens are looked up.
  model_.release_tensor_pages(*weight);
  return Status::ok();
}

}  // namespace edgemt
