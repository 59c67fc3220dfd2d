#include "models/transformer/tensor_layout.h"

#include "models/tensor_table.h"

namespace edgemt::transformer {
namespace {

// The columns of schema/transformer_tensors.def that are the Transformer's
// own (their meaning is there); group and kind are every family's.
enum class Dim : uint8_t { D, D2, D3, F, V, S, P, N };
enum class Condition : uint8_t {
  ALWAYS,
  IF_OUTPUT_BIAS,
  IF_ENCODER_FINAL_NORM,
  IF_DECODER_FINAL_NORM,
  IF_DECODER_SELF_ATTENTION,
  IF_DECODER_SSRU,
  ALIAS_IF_SHARED_EMBEDDINGS,
  ALIAS_IF_TIED_OUTPUT,
};
uint32_t size_of(Dim dim, const TransformerConfig& c, uint32_t /*layer*/) {
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
    case Condition::IF_DECODER_SELF_ATTENTION: return !has_ssru_decoder(c);
    case Condition::IF_DECODER_SSRU: return has_ssru_decoder(c);
    default: return true;
  }
}

// The table, one entry per line of the .def.
using Entry = TableEntry<TransformerTensor, Dim, Condition>;
constexpr Entry kTable[] = {
#define TRANSFORMER_TENSOR(...) EDGEMT_TABLE_ROW(TransformerTensor, __VA_ARGS__)
#include "transformer_tensors.def"
#undef TRANSFORMER_TENSOR
};

const Entry* owner_of(Condition condition, const TransformerConfig& c) {
  if (condition == Condition::ALIAS_IF_SHARED_EMBEDDINGS && c.shared_embeddings) {
    return &kTable[static_cast<size_t>(TransformerTensor::kSourceEmbedding)];
  }
  if (condition == Condition::ALIAS_IF_TIED_OUTPUT && c.tied_output) {
    return &kTable[static_cast<size_t>(TransformerTensor::kTargetEmbedding)];
  }
  return nullptr;
}

}  // namespace

bool tensor_name(TransformerTensor tensor, uint32_t layer, char* out, size_t size) {
  return table_tensor_name<kTable>(tensor, layer, out, size);
}

bool for_each_expected_tensor(const TransformerConfig& config, WeightTypes types,
                              ExpectedTensorVisitor visit, void* context) {
  const TableRules<Entry, TransformerConfig> rules{size_of, present, owner_of,
                                                   config.encoder_layers, config.decoder_layers};
  return walk_tensor_table<kTable>(rules, config, types, visit, context);
}

}  // namespace edgemt::transformer
