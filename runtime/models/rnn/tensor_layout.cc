#include "models/rnn/tensor_layout.h"

#include "models/tensor_table.h"

namespace edgemt::rnn {
namespace {

// The columns of schema/rnn_tensors.def that are the RNN family's own
// (their meaning is there); group and kind are every family's.
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
uint32_t size_of(Dim dim, const RnnConfig& c, uint32_t layer) {
  const auto u32 = [](size_t v) { return static_cast<uint32_t>(v); };
  switch (dim) {
    case Dim::H: return c.hidden;
    case Dim::H2: return 2 * c.hidden;
    case Dim::ES: return c.source_embedding_dim;
    case Dim::ET: return c.target_embedding_dim;
    case Dim::V: return c.vocab_size;
    case Dim::S: return source_vocab_size(c);
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

// The table, one entry per line of the .def.
using Entry = TableEntry<RnnTensor, Dim, Condition>;
constexpr Entry kTable[] = {
#define RNN_TENSOR(...) EDGEMT_TABLE_ROW(RnnTensor, __VA_ARGS__)
#include "rnn_tensors.def"
#undef RNN_TENSOR
};

// The RNN family has no aliases: every tensor owns its bytes.
const Entry* no_owner(Condition /*condition*/, const RnnConfig& /*config*/) { return nullptr; }

}  // namespace

bool tensor_name(RnnTensor tensor, uint32_t layer, char* out, size_t size) {
  return table_tensor_name<kTable>(tensor, layer, out, size);
}

bool for_each_expected_tensor(const RnnConfig& config, WeightTypes types,
                              ExpectedTensorVisitor visit, void* context) {
  const TableRules<Entry, RnnConfig> rules{size_of, present, no_owner, config.layers, config.layers};
  return walk_tensor_table<kTable>(rules, config, types, visit, context);
}

}  // namespace edgemt::rnn
