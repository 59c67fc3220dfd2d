#include "models/tensor_table.h"

namespace edgemt::tensor_table {
namespace {

// "<a>.<b><suffix>", or "<b><suffix>" when a is empty.
void join(char* out, const char* a, const char* b, const char* suffix) {
  if (a[0] != '\0') {
    format_tensor_name(out, kMaxTensorNameLength, "%s.%s%s", a, b, suffix);
  } else {
    format_tensor_name(out, kMaxTensorNameLength, "%s%s", b, suffix);
  }
}

}  // namespace

void group_scope(TableGroup group, uint32_t layer, char* out, size_t size) {
  switch (group) {
    case TableGroup::ENCODER_LAYER: format_tensor_name(out, size, "encoder.layers.%u", layer); return;
    case TableGroup::DECODER_LAYER: format_tensor_name(out, size, "decoder.layers.%u", layer); return;
    default: out[0] = '\0'; return;
  }
}

void Emitter::entry(TableKind kind, const char* scope, const char* name, uint32_t rows,
                    uint32_t cols, const char* owner) {
  char full[kMaxTensorNameLength];
  join(full, scope, name, "");
  char part[kMaxTensorNameLength];
  switch (kind) {
    case TableKind::MATRIX:
    case TableKind::PROJECTION:
      matrix(full, rows, cols, owner, kind == TableKind::PROJECTION);
      return;
    case TableKind::TABLE: emit(full, TensorRole::kVector, DType::kF32, 2, rows, cols, nullptr); return;
    case TableKind::VECTOR: emit(full, TensorRole::kVector, DType::kF32, 1, rows, 0, nullptr); return;
    case TableKind::LINEAR:
      join(part, full, "weight", "");
      matrix(part, rows, cols, nullptr, true);
      join(part, full, "bias", "");
      emit(part, TensorRole::kVector, DType::kF32, 1, rows, 0, nullptr);
      return;
    case TableKind::NORM:
      join(part, full, "weight", "");
      emit(part, TensorRole::kVector, DType::kF32, 1, rows, 0, nullptr);
      join(part, full, "bias", "");
      emit(part, TensorRole::kVector, DType::kF32, 1, rows, 0, nullptr);
      return;
  }
}

// A matrix in the file's type for it (an embedding table, or a projection
// that aliases one: every alias in the tables is of an embedding table,
// `tables`; other projections `matrices`); an I8 one followed by
// `<name>_scale` [rows] F32, which aliases the owner's scales when the
// matrix is an alias, and, for an embedding table that owns its bytes in a
// file with residual codes, by `<name>_residual` and `<name>_residual_scale`.
// (A projection's smoothing vector in smoothed files is the verifier's:
// ExpectedTensor::projection.)
void Emitter::matrix(const char* name, uint32_t rows, uint32_t cols, const char* owner,
                     bool projection) {
  const DType dtype = projection && owner == nullptr ? types_.matrices : types_.tables;
  emit(name, TensorRole::kMatrix, dtype, 2, rows, cols, owner, projection);
  if (dtype != DType::kI8) return;
  char scale[kMaxTensorNameLength];
  char owner_scale[kMaxTensorNameLength];
  join(scale, "", name, "_scale");
  if (owner != nullptr) join(owner_scale, "", owner, "_scale");
  emit(scale, TensorRole::kVector, DType::kF32, 1, rows, 0, owner != nullptr ? owner_scale : nullptr);
  if (!types_.table_residual || projection || owner != nullptr) return;
  // An embedding table's residual codes (two per byte) and their row scales.
  char residual[kMaxTensorNameLength];
  join(residual, "", name, "_residual");
  emit(residual, TensorRole::kResidual, DType::kI8, 2, rows, (cols + 1) / 2, nullptr);
  join(residual, "", name, "_residual_scale");
  emit(residual, TensorRole::kVector, DType::kF32, 1, rows, 0, nullptr);
}

void Emitter::emit(const char* name, TensorRole role, DType dtype, uint32_t rank, uint32_t dim0,
                   uint32_t dim1, const char* alias_of, bool projection) {
  if (stopped_) return;
  ExpectedTensor tensor;
  format_tensor_name(tensor.name, sizeof(tensor.name), "%s", name);
  tensor.role = role;
  tensor.dtype = dtype;
  tensor.rank = rank;
  tensor.shape[0] = dim0;
  tensor.shape[1] = rank > 1 ? dim1 : 0;
  tensor.projection = projection;
  if (alias_of != nullptr) {
    format_tensor_name(tensor.alias_name, sizeof(tensor.alias_name), "%s", alias_of);
    tensor.alias_of = tensor.alias_name;
  }
  if (!visit_(tensor, context_)) stopped_ = true;
}

}  // namespace edgemt::tensor_table
