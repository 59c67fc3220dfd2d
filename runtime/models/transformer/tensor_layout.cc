#include "models/transformer/tensor_layout.h"

#include <cstdio>

namespace edgemt {
namespace {

// The columns of schema/transformer_tensors.def (their meaning is there).
enum class Group : uint8_t { MODEL, ENCODER_LAYER, ENCODER_END, DECODER_LAYER, DECODER_END };
enum class Kind : uint8_t { MATRIX, PROJECTION, TABLE, VECTOR, LINEAR, NORM };
enum class Dim : uint8_t { D, D2, D3, F, V, S, P, N };
enum class Condition : uint8_t {
  ALWAYS,
  IF_OUTPUT_BIAS,
  IF_ENCODER_FINAL_NORM,
  IF_DECODER_FINAL_NORM,
  ALIAS_IF_SHARED_EMBEDDINGS,
  ALIAS_IF_TIED_OUTPUT,
};

struct Entry {
  TransformerTensor id;
  Group group;
  const char* name;
  Kind kind;
  Dim rows;
  Dim cols;
  Condition condition;
};

constexpr Entry kTable[] = {
#define TRANSFORMER_TENSOR(id, group, name, kind, rows, cols, condition) \
  {TransformerTensor::id, Group::group, name, Kind::kind, Dim::rows, Dim::cols, Condition::condition},
#include "transformer_tensors.def"
#undef TRANSFORMER_TENSOR
};
constexpr size_t kTableSize = sizeof(kTable) / sizeof(kTable[0]);

constexpr bool ids_follow_the_table() {
  for (size_t i = 0; i < kTableSize; ++i) {
    if (static_cast<size_t>(kTable[i].id) != i) return false;
  }
  return true;
}
static_assert(ids_follow_the_table(), "kTable[id] is the entry of id");

uint32_t size_of(Dim dim, const TransformerConfig& c) {
  switch (dim) {
    case Dim::D: return c.d_model;
    case Dim::D2: return 2 * c.d_model;
    case Dim::D3: return 3 * c.d_model;
    case Dim::F: return c.ffn_dim;
    case Dim::V: return c.vocab_size;
    case Dim::S: return source_vocab_size(c);
    case Dim::P: return c.max_positions;
    case Dim::N: return 0;
  }
  return 0;
}

// Present at all (aliases are present, sharing bytes).
bool present(Condition condition, const TransformerConfig& c) {
  switch (condition) {
    case Condition::IF_OUTPUT_BIAS: return c.output_bias;
    case Condition::IF_ENCODER_FINAL_NORM: return c.encoder_final_norm;
    case Condition::IF_DECODER_FINAL_NORM: return c.decoder_final_norm;
    default: return true;
  }
}

// The entry whose bytes this one shares, or nullptr.
const Entry* owner_of(Condition condition, const TransformerConfig& c) {
  if (condition == Condition::ALIAS_IF_SHARED_EMBEDDINGS && c.shared_embeddings) {
    return &kTable[static_cast<size_t>(TransformerTensor::kSourceEmbedding)];
  }
  if (condition == Condition::ALIAS_IF_TIED_OUTPUT && c.tied_output) {
    return &kTable[static_cast<size_t>(TransformerTensor::kTargetEmbedding)];
  }
  return nullptr;
}

// Hands each tensor to the visitor; `stopped` latches once it returns false.
class Emitter {
 public:
  Emitter(DType weight_dtype, ExpectedTensorVisitor visit, void* context)
      : weight_dtype_(weight_dtype), visit_(visit), context_(context) {}

  bool stopped() const { return stopped_; }

  // One table entry, its name prefixed by `scope` ("" or "encoder.layers.3").
  void entry(const Entry& e, const char* scope, const TransformerConfig& c) {
    const uint32_t rows = size_of(e.rows, c);
    const uint32_t cols = size_of(e.cols, c);
    char name[kMaxTensorNameLength];
    join(name, scope, e.name, "");
    switch (e.kind) {
      case Kind::MATRIX:
      case Kind::PROJECTION: {
        const Entry* owner = owner_of(e.condition, c);
        matrix(name, rows, cols, owner != nullptr ? owner->name : nullptr, e.kind == Kind::PROJECTION);
        return;
      }
      case Kind::TABLE: emit(name, TensorRole::kVector, DType::kF32, 2, rows, cols, nullptr); return;
      case Kind::VECTOR: emit(name, TensorRole::kVector, DType::kF32, 1, rows, 0, nullptr); return;
      case Kind::LINEAR: {
        char part[kMaxTensorNameLength];
        join(part, name, "weight", "");
        matrix(part, rows, cols, nullptr, true);
        join(part, name, "bias", "");
        emit(part, TensorRole::kVector, DType::kF32, 1, rows, 0, nullptr);
        return;
      }
      case Kind::NORM: {
        char part[kMaxTensorNameLength];
        join(part, name, "weight", "");
        emit(part, TensorRole::kVector, DType::kF32, 1, rows, 0, nullptr);
        join(part, name, "bias", "");
        emit(part, TensorRole::kVector, DType::kF32, 1, rows, 0, nullptr);
        return;
      }
    }
  }

 private:
  // "<a>.<b><suffix>", or "<b><suffix>" when a is empty.
  static void join(char* out, const char* a, const char* b, const char* suffix) {
    if (a[0] != '\0') {
      format_tensor_name(out, kMaxTensorNameLength, "%s.%s%s", a, b, suffix);
    } else {
      format_tensor_name(out, kMaxTensorNameLength, "%s%s", b, suffix);
    }
  }

  // A matrix in the weight dtype; in an I8 file followed by `<name>_scale`
  // [rows] F32, which aliases the owner's scales when the matrix is an alias.
  // (A projection's smoothing vector in smoothed files is the verifier's:
  // ExpectedTensor::projection.)
  void matrix(const char* name, uint32_t rows, uint32_t cols, const char* owner, bool projection) {
    emit(name, TensorRole::kMatrix, weight_dtype_, 2, rows, cols, owner, projection);
    if (weight_dtype_ != DType::kI8) return;
    char scale[kMaxTensorNameLength];
    char owner_scale[kMaxTensorNameLength];
    join(scale, "", name, "_scale");
    if (owner != nullptr) join(owner_scale, "", owner, "_scale");
    emit(scale, TensorRole::kVector, DType::kF32, 1, rows, 0, owner != nullptr ? owner_scale : nullptr);
  }

  void emit(const char* name, TensorRole role, DType dtype, uint32_t rank, uint32_t dim0,
            uint32_t dim1, const char* alias_of, bool projection = false) {
    if (stopped_) return;
    ExpectedTensor tensor;
    tensor.projection = projection;
    format_tensor_name(tensor.name, sizeof(tensor.name), "%s", name);
    tensor.role = role;
    tensor.dtype = dtype;
    tensor.rank = rank;
    tensor.shape[0] = dim0;
    tensor.shape[1] = rank > 1 ? dim1 : 0;
    if (alias_of != nullptr) {
      format_tensor_name(tensor.alias_name, sizeof(tensor.alias_name), "%s", alias_of);
      tensor.alias_of = tensor.alias_name;
    }
    if (!visit_(tensor, context_)) stopped_ = true;
  }

  DType weight_dtype_;
  ExpectedTensorVisitor visit_;
  void* context_;
  bool stopped_ = false;
};

// "encoder.layers.{layer}" / "decoder.layers.{layer}" for the layer groups,
// "" for the others.
void group_scope(Group group, uint32_t layer, char* out, size_t size) {
  switch (group) {
    case Group::ENCODER_LAYER: format_tensor_name(out, size, "encoder.layers.%u", layer); return;
    case Group::DECODER_LAYER: format_tensor_name(out, size, "decoder.layers.%u", layer); return;
    default: out[0] = '\0'; return;
  }
}

}  // namespace

bool transformer_tensor_name(TransformerTensor tensor, uint32_t layer, char* out, size_t size) {
  const size_t index = static_cast<size_t>(tensor);
  if (index >= kTableSize) return false;
  const Entry& e = kTable[index];
  char scope[kMaxTensorNameLength];
  group_scope(e.group, layer, scope, sizeof(scope));
  if (scope[0] == '\0') return format_tensor_name(out, size, "%s", e.name);
  return format_tensor_name(out, size, "%s.%s", scope, e.name);
}

bool for_each_expected_tensor(const TransformerConfig& config, DType weight_dtype,
                              ExpectedTensorVisitor visit, void* context) {
  Emitter out(weight_dtype, visit, context);
  // Each group in file order; the layer groups once per layer.
  const Group order[] = {Group::MODEL, Group::ENCODER_LAYER, Group::ENCODER_END,
                         Group::DECODER_LAYER, Group::DECODER_END};
  for (Group group : order) {
    const uint32_t repeats = group == Group::ENCODER_LAYER   ? config.encoder_layers
                             : group == Group::DECODER_LAYER ? config.decoder_layers
                                                             : 1;
    for (uint32_t layer = 0; layer < repeats && !out.stopped(); ++layer) {
      char scope[kMaxTensorNameLength];
      group_scope(group, layer, scope, sizeof(scope));
      for (const Entry& e : kTable) {
        if (e.group == group && present(e.condition, config)) out.entry(e, scope, config);
      }
    }
  }
  return !out.stopped();
}

size_t expected_tensor_count(const TransformerConfig& config, DType weight_dtype) {
  size_t count = 0;
  for_each_expected_tensor(config, weight_dtype, [&count](const ExpectedTensor&) {
    ++count;
    return true;
  });
  return count;
}

}  // namespace edgemt
