// ExpectedTensor: one tensor a model's config implies, as a family's
// tensor layout (runtime/models/<family>/tensor_layout.h) hands it to the
// verifier, the weight loader and the test model builder.
//
// Nothing here allocates: names are built into fixed buffers with snprintf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "edgemt/model.h"

namespace edgemt {

// Longest tensor name (including the NUL) this runtime builds. The longest
// name TENSORS.md implies is "decoder.layers.{i}.cross_attn_norm.weight",
// 43 characters with a 3-digit layer index.
inline constexpr size_t kMaxTensorNameLength = 96;

// How a tensor is stored.
enum class TensorRole : uint8_t {
  kMatrix,  // projection matrix or embedding table: stored as WeightTypes says
  kVector,  // bias, LayerNorm parameter, position table, int8 row scales: always F32
  kResidual,  // an I8 table's 4-bit residual codes, two per byte: always I8
};

// One tensor the config implies.
struct ExpectedTensor {
  char name[kMaxTensorNameLength] = {};
  TensorRole role = TensorRole::kVector;
  DType dtype = DType::kF32;  // the file's WeightTypes for matrices, F32 for vectors
  uint32_t rank = 0;
  uint32_t shape[kMaxTensorRank] = {0, 0, 0, 0};
  // Name of the tensor whose bytes this one shares (same offset and size in
  // the file), or nullptr: the owner comes earlier in the walk (a Transformer's
  // `output.weight` aliases `embedding.target` when tied_output, say). Points
  // into `alias_name` (so, like the whole struct, valid during the visit).
  const char* alias_of = nullptr;
  char alias_name[kMaxTensorNameLength] = {};
  // A matrix used as a product's weight (not an embedding table): in an
  // Int8SmoothedPerRowDynamic file, when it owns its bytes, its smoothing
  // vector `<name>_smooth` [shape[1]] F32 follows its `_scale`.
  bool projection = false;
};

// The storage types of a file's matrices: `matrices` for the projections,
// `tables` for embedding tables and the projections that alias one (a tied
// output projection). They differ only in Int8PerTensor* files (I8
// projections, F32 tables, as Marian keeps them) and in per-row int8 files
// that keep their tables in F32 (format version 9, `f32_tables`) or F16
// (version 10, `f16_tables`); any other file stores every matrix in its
// weight dtype, which converts implicitly.
struct WeightTypes {
  DType matrices = DType::kF32;
  DType tables = DType::kF32;
  // I8 tables that own their bytes are followed, after `<name>_scale`, by
  // `<name>_residual` [rows, ceil(cols / 2)] I8 and `<name>_residual_scale`
  // [rows] F32 (format version 11, `residual_tables`).
  bool table_residual = false;
  constexpr WeightTypes(DType all) : matrices(all), tables(all) {}  // NOLINT(runtime/explicit)
  constexpr WeightTypes(DType projections, DType embedding_tables, bool residual = false)
      : matrices(projections), tables(embedding_tables), table_residual(residual) {}
};

// A file's WeightTypes from its weight dtype, quantization scheme and
// f32_tables, f16_tables and residual_tables flags (schema/edgemt.fbs).
constexpr WeightTypes weight_types(DType weight_dtype, QuantizationScheme scheme,
                                   bool f32_tables = false, bool f16_tables = false,
                                   bool residual_tables = false) {
  return scheme == QuantizationScheme::kInt8PerTensorDynamic ||
                 scheme == QuantizationScheme::kInt8PerTensorStatic ||
                 (f32_tables && scheme != QuantizationScheme::kNone)
             ? WeightTypes(weight_dtype, DType::kF32)
         : f16_tables && scheme != QuantizationScheme::kNone
             ? WeightTypes(weight_dtype, DType::kF16)
             : WeightTypes(weight_dtype, weight_dtype,
                           residual_tables && weight_dtype == DType::kI8 &&
                               scheme != QuantizationScheme::kNone);
}

// Called once per expected tensor; return false to stop the enumeration.
// `tensor` is only valid during the call.
using ExpectedTensorVisitor = bool (*)(const ExpectedTensor& tensor, void* context);

// Calls `for_each_expected_tensor(config, types, visit, context)` of
// the config's family with any callable `bool(const ExpectedTensor&)` (a
// lambda with captures, say). No heap: the callable is passed by address.
template <typename Config, typename Visitor,
          typename = std::enable_if_t<!std::is_convertible_v<Visitor, ExpectedTensorVisitor>>>
bool for_each_expected_tensor(const Config& config, WeightTypes types, Visitor&& visit) {
  using V = std::remove_reference_t<Visitor>;
  return for_each_expected_tensor(
      config, types,
      [](const ExpectedTensor& tensor, void* context) {
        return static_cast<bool>((*static_cast<V*>(context))(tensor));
      },
      const_cast<void*>(static_cast<const void*>(&visit)));
}

// Number of tensors `config` implies in a file of these weight types.
template <typename Config>
size_t expected_tensor_count(const Config& config, WeightTypes types = DType::kF32) {
  size_t count = 0;
  for_each_expected_tensor(config, types, [&count](const ExpectedTensor&) {
    ++count;
    return true;
  });
  return count;
}

// printf into `buffer` (e.g. format_tensor_name(name, sizeof(name),
// "encoder.layers.%u.ffn.in.weight", i)). Returns false (and leaves a
// truncated, NUL-terminated string) when the name does not fit.
bool format_tensor_name(char* buffer, size_t size, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

}  // namespace edgemt
