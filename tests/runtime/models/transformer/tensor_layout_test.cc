// The tensor list a config implies, checked against schema/TENSORS.md written
// out by hand (so the runtime's list cannot drift from the document).
#include "models/transformer/tensor_layout.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace edgemt::transformer;  // the family under test

namespace edgemt {
namespace {

struct Row {
  std::string name;
  std::vector<uint32_t> shape;
  DType dtype;
  std::string alias_of;
};

std::vector<Row> collect(const TransformerConfig& config, DType weight_dtype) {
  std::vector<Row> rows;
  for_each_expected_tensor(config, weight_dtype, [&](const ExpectedTensor& t) {
    rows.push_back({t.name, std::vector<uint32_t>(t.shape, t.shape + t.rank), t.dtype,
                    t.alias_of != nullptr ? t.alias_of : ""});
    return true;
  });
  return rows;
}

TransformerConfig small_config() {
  TransformerConfig c;
  c.encoder_layers = 1;
  c.decoder_layers = 1;
  c.d_model = 8;
  c.heads = 2;
  c.ffn_dim = 16;
  c.vocab_size = 32;
  c.max_positions = 16;
  return c;
}

TEST_CASE("models/transformer/tensor_layout: 1+1 layers list every tensor of TENSORS.md in order") {
  const DType w = DType::kF16;
  const DType f = DType::kF32;
  const std::vector<Row> expected = {
      {"embedding.source", {32, 8}, w, ""},
      {"embedding.target", {32, 8}, w, ""},
      {"position.table", {16, 8}, f, ""},
      {"output.weight", {32, 8}, w, ""},
      {"encoder.layers.0.self_attn.qkv.weight", {24, 8}, w, ""},
      {"encoder.layers.0.self_attn.qkv.bias", {24}, f, ""},
      {"encoder.layers.0.self_attn.out.weight", {8, 8}, w, ""},
      {"encoder.layers.0.self_attn.out.bias", {8}, f, ""},
      {"encoder.layers.0.self_attn_norm.weight", {8}, f, ""},
      {"encoder.layers.0.self_attn_norm.bias", {8}, f, ""},
      {"encoder.layers.0.ffn.in.weight", {16, 8}, w, ""},
      {"encoder.layers.0.ffn.in.bias", {16}, f, ""},
      {"encoder.layers.0.ffn.out.weight", {8, 16}, w, ""},
      {"encoder.layers.0.ffn.out.bias", {8}, f, ""},
      {"encoder.layers.0.ffn_norm.weight", {8}, f, ""},
      {"encoder.layers.0.ffn_norm.bias", {8}, f, ""},
      {"decoder.layers.0.self_attn.qkv.weight", {24, 8}, w, ""},
      {"decoder.layers.0.self_attn.qkv.bias", {24}, f, ""},
      {"decoder.layers.0.self_attn.out.weight", {8, 8}, w, ""},
      {"decoder.layers.0.self_attn.out.bias", {8}, f, ""},
      {"decoder.layers.0.self_attn_norm.weight", {8}, f, ""},
      {"decoder.layers.0.self_attn_norm.bias", {8}, f, ""},
      {"decoder.layers.0.cross_attn.q.weight", {8, 8}, w, ""},
      {"decoder.layers.0.cross_attn.q.bias", {8}, f, ""},
      {"decoder.layers.0.cross_attn.kv.weight", {16, 8}, w, ""},
      {"decoder.layers.0.cross_attn.kv.bias", {16}, f, ""},
      {"decoder.layers.0.cross_attn.out.weight", {8, 8}, w, ""},
      {"decoder.layers.0.cross_attn.out.bias", {8}, f, ""},
      {"decoder.layers.0.cross_attn_norm.weight", {8}, f, ""},
      {"decoder.layers.0.cross_attn_norm.bias", {8}, f, ""},
      {"decoder.layers.0.ffn.in.weight", {16, 8}, w, ""},
      {"decoder.layers.0.ffn.in.bias", {16}, f, ""},
      {"decoder.layers.0.ffn.out.weight", {8, 16}, w, ""},
      {"decoder.layers.0.ffn.out.bias", {8}, f, ""},
      {"decoder.layers.0.ffn_norm.weight", {8}, f, ""},
      {"decoder.layers.0.ffn_norm.bias", {8}, f, ""},
  };
  const std::vector<Row> rows = collect(small_config(), w);
  CHECK(rows.size() == expected.size());
  CHECK(expected_tensor_count(small_config()) == expected.size());
  for (size_t i = 0; i < rows.size() && i < expected.size(); ++i) {
    CAPTURE(expected[i].name);
    CHECK(rows[i].name == expected[i].name);
    CHECK(rows[i].shape == expected[i].shape);
    CHECK(rows[i].dtype == expected[i].dtype);
    CHECK(rows[i].alias_of == expected[i].alias_of);
  }
}

TEST_CASE("models/transformer/tensor_layout: optional tensors and aliases follow the config flags") {
  TransformerConfig c = small_config();
  c.encoder_layers = 2;
  c.decoder_layers = 3;
  c.output_bias = true;
  c.encoder_final_norm = true;
  c.decoder_final_norm = true;
  c.shared_embeddings = true;
  c.tied_output = true;
  const std::vector<Row> rows = collect(c, DType::kF32);
  CHECK(rows.size() == expected_tensor_count(c));
  CHECK(rows.size() == size_t{4 + 1 + 2 * 12 + 2 + 3 * 20 + 2});
  auto find = [&](const std::string& name) -> const Row* {
    for (const Row& row : rows) {
      if (row.name == name) return &row;
    }
    return nullptr;
  };
  const Row* target = find("embedding.target");
  const Row* output = find("output.weight");
  const Row* bias = find("output.bias");
  CHECK(target != nullptr);
  CHECK(output != nullptr);
  CHECK(bias != nullptr);
  if (target == nullptr || output == nullptr || bias == nullptr) return;
  CHECK(target->alias_of == "embedding.source");
  CHECK(output->alias_of == "embedding.target");
  CHECK(bias->shape == std::vector<uint32_t>{32});
  CHECK(find("encoder.final_norm.weight") != nullptr);
  CHECK(find("decoder.final_norm.bias") != nullptr);
  CHECK(find("encoder.layers.1.ffn_norm.bias") != nullptr);
  CHECK(find("decoder.layers.2.cross_attn.kv.weight") != nullptr);
  CHECK(find("decoder.layers.3.ffn.in.weight") == nullptr);
  // The final norms come after their stack's layers.
  CHECK(rows.back().name == "decoder.final_norm.bias");
}

TEST_CASE("models/transformer/tensor_layout: a visitor returning false stops the walk") {
  size_t calls = 0;
  const bool complete = for_each_expected_tensor(small_config(), DType::kF32,
                                                 [&](const ExpectedTensor&) { return ++calls < 5; });
  CHECK_FALSE(complete);
  CHECK(calls == 5);
  // The plain function-pointer form.
  size_t count = 0;
  CHECK(for_each_expected_tensor(
      small_config(), DType::kF32,
      [](const ExpectedTensor&, void* context) {
        ++*static_cast<size_t*>(context);
        return true;
      },
      &count));
  CHECK(count == expected_tensor_count(small_config()));
}

TEST_CASE("models/transformer/tensor_layout: format_tensor_name writes into the caller's buffer") {
  char name[kMaxTensorNameLength];
  CHECK(format_tensor_name(name, sizeof(name), "encoder.layers.%u.ffn.in.weight", 7u));
  CHECK(std::strcmp(name, "encoder.layers.7.ffn.in.weight") == 0);
  char small[8];
  CHECK_FALSE(format_tensor_name(small, sizeof(small), "decoder.layers.%u.x", 1u));
  CHECK(std::strcmp(small, "decoder") == 0);
  // The longest name at the layer limit fits.
  CHECK(format_tensor_name(name, sizeof(name), "decoder.layers.%u.cross_attn_norm.weight", 127u));
}

TEST_CASE("models/transformer/tensor_layout: table ids name the file's tensors (what the loader reads)") {
  char name[kMaxTensorNameLength];
  CHECK(tensor_name(TransformerTensor::kSourceEmbedding, 7, name, sizeof(name)));
  CHECK(std::string(name) == "embedding.source");
  CHECK(tensor_name(TransformerTensor::kEncoderFfnIn, 2, name, sizeof(name)));
  CHECK(std::string(name) == "encoder.layers.2.ffn.in");
  CHECK(tensor_name(TransformerTensor::kDecoderCrossKv, 11, name, sizeof(name)));
  CHECK(std::string(name) == "decoder.layers.11.cross_attn.kv");
  CHECK(tensor_name(TransformerTensor::kDecoderFinalNorm, 0, name, sizeof(name)));
  CHECK(std::string(name) == "decoder.final_norm");
  char small[8];
  CHECK_FALSE(tensor_name(TransformerTensor::kEncoderFfnIn, 0, small, sizeof(small)));

  // Every id's name is in the walk of a config that has everything (as the
  // prefix of a LINEAR's or NORM's .weight where it is one): a self-attention
  // decoder's and an SSRU decoder's walks together.
  TransformerConfig config = small_config();
  config.encoder_layers = config.decoder_layers = 2;
  config.output_bias = config.encoder_final_norm = config.decoder_final_norm = true;
  std::vector<std::string> walked;
  for (DecoderAutoregression kind :
       {DecoderAutoregression::kSelfAttention, DecoderAutoregression::kSsru}) {
    config.decoder_autoregression = kind;
    for_each_expected_tensor(config, DType::kF32, [&](const ExpectedTensor& t) {
      walked.emplace_back(t.name);
      return true;
    });
  }
  for (size_t id = 0; id <= static_cast<size_t>(TransformerTensor::kDecoderFinalNorm); ++id) {
    REQUIRE(tensor_name(static_cast<TransformerTensor>(id), 1, name, sizeof(name)));
    const std::string base(name);
    CAPTURE(base);
    bool found = false;
    for (const std::string& w : walked) found |= w == base || w == base + ".weight";
    CHECK(found);
  }
}

}  // namespace
}  // namespace edgemt
