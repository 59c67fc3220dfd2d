// family_schema.cc: the family and config of both format versions, read
// straight from FlatBuffers the test ModelBuilder writes. (Whole files go
// through the verifier in format/model_verifier_test.cc.)
#include "models/family_schema.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/model_builder.h"

using namespace edgemt::transformer;  // the family under test


namespace edgemt {
namespace {

using testing::ModelBuilder;

Status read(const ModelBuilder& builder, FamilyConfig* out) {
  const std::vector<uint8_t> bytes = builder.build();
  return read_family_config(*format::GetSizePrefixedModel(bytes.data()), out);
}

TEST_CASE("models/family_schema: version 1 and 2 give the same config") {
  for (uint32_t version : {1u, 2u}) {
    CAPTURE(version);
    ModelBuilder builder;
    builder.format_version = version;
    builder.config.heads = 4;
    builder.config.activation = Activation::kGelu;
    FamilyConfig family;
    REQUIRE(read(builder, &family).is_ok());
    CHECK(family.id == FamilyId::TransformerConfig);
    CHECK(family.as<TransformerConfig>().heads == 4);
    CHECK(family.as<TransformerConfig>().activation == Activation::kGelu);
    CHECK(family.as<TransformerConfig>().vocab_size == builder.config.vocab_size);
  }
}

TEST_CASE("models/family_schema: missing, contradictory and unknown configs") {
  FamilyConfig family;
  ModelBuilder none;
  none.include_config = false;
  CHECK(std::string(read(none, &family).message()) == "model has no family_config");
  ModelBuilder legacy;
  legacy.legacy_fields = true;
  CHECK(read(legacy, &family).code() == StatusCode::kInvalidModel);
  ModelBuilder unknown;
  unknown.raw_family = 3;  // 1 and 2 are TransformerConfig and RnnConfig
  CHECK(read(unknown, &family).code() == StatusCode::kUnsupported);
  ModelBuilder bad_range;
  bad_range.config.ffn_dim = 0;  // the family's own check runs too
  CHECK(std::strstr(read(bad_range, &family).message(), "config.ffn_dim") != nullptr);
}

}  // namespace
}  // namespace edgemt
