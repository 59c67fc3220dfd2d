#include "models/rnn/tensor_layout.h"

#include <initializer_list>

namespace edgemt {
namespace {

// The columns of schema/rnn_tensors.def (their meaning is there).
enum class Group : uint8_t { MODEL, ENCODER_LAYER, DECODER_LAYER };
enum class Kind : uint8_t { MATRIX, VECTOR, LINEAR };
enum class Dim : uint8_t { H, H2, ES, ET, V, S, GE, GD, EU, EI, DI, OI, N };
enum class Condition : uint8_t {
  ALWAYS,
  IF_KEY,
  IF_ADDITIVE,
  IF_QUERY_BIAS,
  IF_COMBINE,
  IF_COMBINE_BIAS,
  IF_BIDIRECTIONAL,
};

struct Entry {
  RnnTensor id;
  Group group;
  const char* name;
  Kind kind;
  Dim rows;
  Dim cols;
  Condition condition;
};

constexpr Entry kTable[] = {
#define RNN_TENSOR(id, group, name, kind, rows, cols, condition) \
  {RnnTensor::id, Group::group, name, Kind::kind, Dim::rows, Dim::cols, Condition::condition},
#include "rnn_tensors.def"
#undef RNN_TENSOR
};
constexpr size_t kTableSize = sizeof(kTable) / sizeof(kTable[0]);

constexpr bool ids_follow_the_table() {
  for (size_t i = 0; i < kTableSize; ++i) {
    if (static_cast<size_t>(kTable[i].id) != i) return false;
  }
  return true;
}
static_assert(ids_follow_the_table(), "kTable[id] is the entry of id");

uint32_t size_of(Dim dim, const RnnConfig& c, uint32_t layer) {
  const auto u32 = [](size_t v) { return static_cast<uint32_t>(v); };
  switch (dim) {
    case Dim::H: return c.hidden;
    case Dim::H2: return 2 * c.hidden;
    case Dim::ES: return c.source_embedding_dim;
    case Dim::ET: return c.target_embedding_dim;
    case Dim::V: return c.vocab_size;
    case Dim::S: return rnn_source_vocab_size(c);
    case Dim::GE: return u32(rnn_gates(c) * rnn_encoder_units(c));
    case Dim::GD: return u32(rnn_gates(c) * c.hidden);
    case Dim::EU: return u32(rnn_encoder_units(c));
    case Dim::EI: return layer == 0 ? c.source_embedding_dim : c.hidden;
    case Dim::DI: return layer == 0 ? u32(rnn_decoder_input_dim(c)) : c.hidden;
    case Dim::OI: return u32(rnn_output_input_dim(c));
    case Dim::N: return 0;
  }
  return 0;
}

bool present(Condition condition, const RnnConfig& c) {
  switch (condition) {
    case Condition::ALWAYS: return true;
    case Condition::IF_KEY: return c.score != RnnScore::kDot;
    case Condition::IF_ADDITIVE: return c.score == RnnScore::kAdditive;
    case Condition::IF_QUERY_BIAS: return c.query_bias;
    case Condition::IF_COMBINE: return c.output != RnnOutput::kStateContext;
    case Condition::IF_COMBINE_BIAS: return c.combine_bias;
    case Condition::IF_BIDIRECTIONAL: return c.bidirectional_encoder;
  }
  return false;
}

void scope_name(Group group, uint32_t layer, const char* name, const char* suffix, char* out,
                size_t size) {
  switch (group) {
    case Group::ENCODER_LAYER:
      format_tensor_name(out, size, "encoder.layers.%u.%s%s", layer, name, suffix);
      return;
    case Group::DECODER_LAYER:
      format_tensor_name(out, size, "decoder.layers.%u.%s%s", layer, name, suffix);
      return;
    case Group::MODEL: format_tensor_name(out, size, "%s%s", name, suffix); return;
  }
}

// Hands tensors to the visitor until it returns false.
struct Emitter {
  DType weight_dtype;
  ExpectedTensorVisitor visit;
  void* context;
  bool stopped = false;

  void emit(const char* name, TensorRole role, DType dtype, uint32_t rows, uint32_t cols) {
    if (stopped) return;
    ExpectedTensor tensor;
    format_tensor_name(tensor.name, sizeof(tensor.name), "%s", name);
    tensor.role = role;
    tensor.dtype = dtype;
    tensor.rank = cols != 0 ? 2 : 1;
    tensor.shape[0] = rows;
    tensor.shape[1] = cols;
    if (!visit(tensor, context)) stopped = true;
  }

  // A matrix in the weight dtype (+ `<name>_scale` [rows] in I8 files).
  void matrix(const char* name, uint32_t rows, uint32_t cols) {
    emit(name, TensorRole::kMatrix, weight_dtype, rows, cols);
    if (weight_dtype != DType::kI8) return;
    char scale[kMaxTensorNameLength];
    format_tensor_name(scale, sizeof(scale), "%s_scale", name);
    emit(scale, TensorRole::kVector, DType::kF32, rows, 0);
  }

  void entry(const Entry& e, uint32_t layer, const RnnConfig& c) {
    const uint32_t rows = size_of(e.rows, c, layer);
    const uint32_t cols = size_of(e.cols, c, layer);
    char name[kMaxTensorNameLength];
    switch (e.kind) {
      case Kind::MATRIX:
        scope_name(e.group, layer, e.name, "", name, sizeof(name));
        matrix(name, rows, cols);
        return;
      case Kind::VECTOR:
        scope_name(e.group, layer, e.name, "", name, sizeof(name));
        emit(name, TensorRole::kVector, DType::kF32, rows, 0);
        return;
      case Kind::LINEAR:
        scope_name(e.group, layer, e.name, ".weight", name, sizeof(name));
        matrix(name, rows, cols);
        scope_name(e.group, layer, e.name, ".bias", name, sizeof(name));
        emit(name, TensorRole::kVector, DType::kF32, rows, 0);
        return;
    }
  }
};

}  // namespace

bool rnn_tensor_name(RnnTensor tensor, uint32_t layer, char* out, size_t size) {
  const size_t index = static_cast<size_t>(tensor);
  if (index >= kTableSize) return false;
  const Entry& e = kTable[index];
  scope_name(e.group, layer, e.name, "", out, size);
  return true;
}

bool for_each_expected_tensor(const RnnConfig& config, DType weight_dtype,
                              ExpectedTensorVisitor visit, void* context) {
  Emitter out{weight_dtype, visit, context};
  for (Group group : {Group::MODEL, Group::ENCODER_LAYER, Group::DECODER_LAYER}) {
    const uint32_t repeats = group == Group::MODEL ? 1 : config.layers;
    for (uint32_t layer = 0; layer < repeats && !out.stopped; ++layer) {
      for (const Entry& e : kTable) {
        if (e.group == group && present(e.condition, config)) out.entry(e, layer, config);
      }
    }
  }
  return !out.stopped;
}

}  // namespace edgemt
