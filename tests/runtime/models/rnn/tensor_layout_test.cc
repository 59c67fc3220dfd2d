// The tensor list an RnnConfig implies, written out by hand from
// schema/rnn_tensors.def and schema/TENSORS.md (so the walk cannot drift
// from the documents).
#include "models/rnn/tensor_layout.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace edgemt::rnn;  // the family under test

namespace edgemt {
namespace {

struct Row {
  std::string name;
  std::vector<uint32_t> shape;
  DType dtype;
};

std::vector<Row> collect(const RnnConfig& config, DType weight_dtype) {
  std::vector<Row> rows;
  for_each_expected_tensor(config, weight_dtype, [&](const ExpectedTensor& t) {
    CHECK(t.alias_of == nullptr);
    rows.push_back({t.name, std::vector<uint32_t>(t.shape, t.shape + t.rank), t.dtype});
    return true;
  });
  return rows;
}

void check_rows(const std::vector<Row>& got, const std::vector<Row>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].name == want[i].name);
    CHECK(got[i].shape == want[i].shape);
    CHECK(got[i].dtype == want[i].dtype);
  }
}

TEST_CASE("models/rnn/tensor_layout: Bahdanau GRU, bidirectional, 2 layers, int8") {
  RnnConfig c;
  c.cell = RnnCell::kGru;
  c.layers = 2;
  c.bidirectional_encoder = true;
  c.source_embedding_dim = 8;
  c.target_embedding_dim = 6;
  c.hidden = 10;
  c.score = RnnScore::kAdditive;
  c.query = RnnQuery::kPrevious;
  c.decoder_input = RnnDecoderInput::kEmbeddingContext;
  c.output = RnnOutput::kStateContext;
  c.vocab_size = 40;
  c.source_vocab_size = 30;
  c.max_positions = 32;
  const DType q = DType::kI8, f = DType::kF32;
  std::vector<Row> want = {
      {"embedding.source", {30, 8}, q}, {"embedding.source_scale", {30}, f},
      {"embedding.target", {40, 6}, q}, {"embedding.target_scale", {40}, f},
      {"attention.key", {10, 10}, q},   {"attention.key_scale", {10}, f},
      {"attention.query", {10, 10}, q}, {"attention.query_scale", {10}, f},
      {"attention.v", {10}, f},
      {"output.weight", {40, 20}, q},   {"output.weight_scale", {40}, f}, {"output.bias", {40}, f},
  };
  for (uint32_t l = 0; l < 2; ++l) {
    const std::string p = "encoder.layers." + std::to_string(l) + ".";
    const uint32_t in = l == 0 ? 8 : 10;
    for (const char* part : {"ih", "hh", "ih_reverse", "hh_reverse"}) {
      const bool ih = part[0] == 'i';
      want.push_back({p + part + ".weight", {15, ih ? in : 5u}, q});
      want.push_back({p + part + ".weight_scale", {15}, f});
      want.push_back({p + part + ".bias", {15}, f});
    }
  }
  for (uint32_t l = 0; l < 2; ++l) {
    const std::string p = "decoder.layers." + std::to_string(l) + ".";
    want.push_back({p + "ih.weight", {30, l == 0 ? 16u : 10u}, q});
    want.push_back({p + "ih.weight_scale", {30}, f});
    want.push_back({p + "ih.bias", {30}, f});
    want.push_back({p + "hh.weight", {30, 10}, q});
    want.push_back({p + "hh.weight_scale", {30}, f});
    want.push_back({p + "hh.bias", {30}, f});
  }
  check_rows(collect(c, q), want);
}

TEST_CASE("models/rnn/tensor_layout: Luong dot LSTM, input feed, combine bias, f32") {
  RnnConfig c;
  c.layers = 1;
  c.source_embedding_dim = 8;
  c.target_embedding_dim = 6;
  c.hidden = 10;
  c.decoder_input = RnnDecoderInput::kEmbeddingInputFeed;
  c.combine_bias = true;
  c.vocab_size = 40;
  c.max_positions = 32;
  const DType f = DType::kF32;
  check_rows(collect(c, f), {
                                {"embedding.source", {40, 8}, f},
                                {"embedding.target", {40, 6}, f},
                                {"attention.combine", {10, 20}, f},
                                {"attention.combine_bias", {10}, f},
                                {"output.weight", {40, 10}, f},
                                {"output.bias", {40}, f},
                                {"encoder.layers.0.ih.weight", {40, 8}, f},
                                {"encoder.layers.0.ih.bias", {40}, f},
                                {"encoder.layers.0.hh.weight", {40, 10}, f},
                                {"encoder.layers.0.hh.bias", {40}, f},
                                {"decoder.layers.0.ih.weight", {40, 16}, f},
                                {"decoder.layers.0.ih.bias", {40}, f},
                                {"decoder.layers.0.hh.weight", {40, 10}, f},
                                {"decoder.layers.0.hh.bias", {40}, f},
                            });
  char name[kMaxTensorNameLength];
  CHECK(tensor_name(RnnTensor::kDecoderHh, 3, name, sizeof(name)));
  CHECK(std::string(name) == "decoder.layers.3.hh");
  // A visitor that stops early stops the walk.
  size_t seen = 0;
  CHECK_FALSE(for_each_expected_tensor(c, f, [&](const ExpectedTensor&) { return ++seen < 3; }));
  CHECK(seen == 3);
}

}  // namespace
}  // namespace edgemt
