// The integrity trailer (format/integrity.h) through the verifier: a file of
// format version 4 is refused when any one of its bits is flipped, in every
// region (size prefix, FlatBuffer, padding, each tensor, the gaps between
// tensors, the trailer), is accepted with bytes after the trailer, needs its
// trailer, and skips only the CRC pass when asked to.
#include "format/integrity.h"

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "edgemt/model.h"
#include "format/model_verifier.h"
#include "kernels/crc32c.h"
#include "support/model_builder.h"

using namespace edgemt::transformer;  // the family under test

namespace edgemt {
namespace {

using testing::BuiltLayout;
using testing::ModelBuilder;

Status verify(const std::vector<uint8_t>& bytes, bool verify_checksum = true,
              FileChecksum* checksum = nullptr) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size()]);
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  VerifiedModel model;
  VerifyOptions options;
  options.verify_checksum = verify_checksum;
  const Status status = verify_model(copy.get(), bytes.size(), &model, options);
  if (checksum != nullptr) *checksum = model.checksum;
  return status;
}

std::string message(const Status& status) { return status.message(); }

// A small int8 file with shared and tied embeddings (aliases) and an output
// bias: f32 and i8 tensors, gaps of zero padding between them.
ModelBuilder small_builder() {
  TransformerConfig config = testing::tiny_config();
  config.shared_embeddings = config.tied_output = true;
  config.output_bias = true;
  return ModelBuilder(config, DType::kI8);
}

TEST_CASE("format/integrity: a version-4 file carries both checksums and passes") {
  BuiltLayout layout;
  const std::vector<uint8_t> bytes = small_builder().build(&layout);
  REQUIRE(layout.trailer_offset == layout.weights_offset + layout.weights_size);
  REQUIRE(bytes.size() == layout.trailer_offset + kIntegrityTrailerBytes);
  FileChecksum checksum;
  const Status status = verify(bytes, true, &checksum);
  REQUIRE_MESSAGE(status.is_ok(), message(status));
  CHECK(checksum.present);
  CHECK(checksum.verified);
  CHECK(checksum.header_crc32c == kernels::crc32c(bytes.data(), layout.weights_offset));
  CHECK(checksum.weights_crc32c ==
        kernels::crc32c(bytes.data() + layout.weights_offset, layout.weights_size));
  CHECK(std::memcmp(bytes.data() + layout.trailer_offset, "EMTC", 4) == 0);
}

TEST_CASE("format/integrity: one flipped bit anywhere in the file is refused") {
  BuiltLayout layout;
  const std::vector<uint8_t> bytes = small_builder().build(&layout);
  REQUIRE(verify(bytes).is_ok());
  // Every byte, a different bit each time: the size prefix and identifier,
  // the FlatBuffer (config, tokenizer, tensor table), the padding before the
  // segment, every tensor and every gap in the segment, and the trailer.
  size_t refused = 0;
  size_t named_checksum = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> flipped = bytes;
    flipped[i] ^= static_cast<uint8_t>(1u << (i % 8));
    const Status status = verify(flipped);
    CAPTURE(i);
    CHECK_FALSE(status.is_ok());
    refused += status.is_ok() ? 0 : 1;
    named_checksum += std::strstr(status.message(), "CRC-32C") != nullptr ? 1 : 0;
  }
  CHECK(refused == bytes.size());
  // Past the first 12 bytes (size prefix, root offset, identifier) almost
  // every flip is found by the checksums themselves, before anything else
  // reads the bytes (the rest: the version field, the trailer's magic).
  MESSAGE(bytes.size() << " bytes, each flipped: all refused, " << named_checksum
                       << " by a checksum mismatch");
  CHECK(named_checksum * 10 > bytes.size() * 9);
}

TEST_CASE("format/integrity: each region named: header, weights, trailer") {
  BuiltLayout layout;
  const std::vector<uint8_t> bytes = small_builder().build(&layout);
  auto flip = [&](size_t at) {
    std::vector<uint8_t> copy = bytes;
    copy[at] ^= 0x10;
    return verify(copy);
  };
  // The padding before the segment (zero bytes the FlatBuffer does not use).
  const size_t padding = layout.weights_offset - 1;
  REQUIRE(padding >= 4 + layout.flatbuffer_size);
  CHECK(std::string(flip(padding).message()).find("the header's CRC-32C") != std::string::npos);
  // Last weight byte, then each trailer field.
  CHECK(std::string(flip(layout.trailer_offset - 1).message()).find("the weights' CRC-32C") !=
        std::string::npos);
  CHECK(std::string(flip(layout.trailer_offset).message()).find("no checksum trailer") !=
        std::string::npos);
  CHECK(std::string(flip(layout.trailer_offset + 5).message()).find("the header's CRC-32C") !=
        std::string::npos);
  CHECK(std::string(flip(layout.trailer_offset + 9).message()).find("the weights' CRC-32C") !=
        std::string::npos);
}

TEST_CASE("format/integrity: bytes after the trailer are allowed; a missing trailer is not") {
  ModelBuilder padded = small_builder();
  padded.trailing_bytes = 4096;  // a flash image's padding
  Status status = verify(padded.build());
  CHECK_MESSAGE(status.is_ok(), message(status));
  ModelBuilder without = small_builder();
  without.checksum_trailer = false;
  status = verify(without.build());
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK_MESSAGE(std::strstr(status.message(), "checksum trailer") != nullptr, message(status));
  std::vector<uint8_t> cut = small_builder().build();
  cut.resize(cut.size() - 1);
  status = verify(cut);
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK_MESSAGE(std::strstr(status.message(), "truncated") != nullptr, message(status));
}

TEST_CASE("format/integrity: verify_checksum off skips the CRC pass and nothing else") {
  BuiltLayout layout;
  const std::vector<uint8_t> bytes = small_builder().build(&layout);
  // A finite weight changed: only a checksum can tell.
  std::vector<uint8_t> changed = bytes;
  changed[layout.trailer_offset - 1] ^= 0x01;
  FileChecksum checksum;
  Status status = verify(changed, false, &checksum);
  CHECK_MESSAGE(status.is_ok(), message(status));
  CHECK(checksum.present);
  CHECK_FALSE(checksum.verified);
  CHECK_FALSE(verify(changed, true).is_ok());
  // The trailer must still be there, and the other checks still run.
  ModelBuilder without = small_builder();
  without.checksum_trailer = false;
  CHECK(verify(without.build(), false).code() == StatusCode::kInvalidModel);
  ModelBuilder nan = small_builder();
  testing::BuilderTensor* bias = nan.find("output.bias");
  REQUIRE(bias != nullptr);
  bias->values[0] = std::numeric_limits<float>::quiet_NaN();
  CHECK(verify(nan.build(), false).code() == StatusCode::kInvalidModel);
}

TEST_CASE("format/integrity: files before version 4 have no trailer and still load") {
  for (uint32_t version : {1u, 2u, 3u}) {
    CAPTURE(version);
    ModelBuilder builder = small_builder();
    builder.format_version = version;
    FileChecksum checksum;
    const Status status = verify(builder.build(), true, &checksum);
    CHECK_MESSAGE(status.is_ok(), message(status));
    CHECK_FALSE(checksum.present);
    CHECK_FALSE(checksum.verified);
  }
}

TEST_CASE("format/integrity: Model::load and from_buffer honour verify_checksum") {
  BuiltLayout layout;
  std::vector<uint8_t> bytes = small_builder().build(&layout);
  bytes[layout.trailer_offset - 1] ^= 0x01;
  testing::TempFile file(bytes, "integrity");
  REQUIRE(file.ok());
  std::unique_ptr<Model> model;
  CHECK(Model::load(file.path().c_str(), &model).code() == StatusCode::kInvalidModel);
  LoadOptions trusting;
  trusting.verify_checksum = false;
  for (LoadMode mode : {LoadMode::kMap, LoadMode::kCopy}) {
    trusting.mode = mode;
    const Status status = Model::load(file.path().c_str(), trusting, &model);
    REQUIRE_MESSAGE(status.is_ok(), message(status));
    CHECK(model->checksum().present);
    CHECK_FALSE(model->checksum().verified);
  }
  void* aligned = std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64);
  REQUIRE(aligned != nullptr);
  std::memcpy(aligned, bytes.data(), bytes.size());
  CHECK(Model::from_buffer(aligned, bytes.size(), &model).code() == StatusCode::kInvalidModel);
  CHECK(Model::from_buffer(aligned, bytes.size(), trusting, &model).is_ok());
  model.reset();
  std::free(aligned);
}

}  // namespace
}  // namespace edgemt
