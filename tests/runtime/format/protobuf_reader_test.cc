// ProtobufReader against messages written by the test ProtoWriter (and by
// hand, for what a writer never produces): every wire type, varints at their
// edges, and every kind of malformed input stopping with its reason.
#include "format/protobuf_reader.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "support/sentencepiece_builder.h"

namespace edgemt {
namespace {

using testing::ProtoWriter;

// All fields of `bytes`, read from an exact-size heap copy (for ASan) that
// lives as long as the result (the fields point into it), and the error.
struct Read {
  std::unique_ptr<uint8_t[]> copy;
  std::vector<ProtobufField> fields;
};

Read read_all(const std::string& bytes, std::string* error) {
  Read read;
  read.copy.reset(new uint8_t[bytes.size() + 1]);
  std::memcpy(read.copy.get(), bytes.data(), bytes.size());
  ProtobufReader reader(read.copy.get(), bytes.size());
  ProtobufField field;
  while (reader.next(&field)) read.fields.push_back(field);
  *error = reader.error();
  CHECK(reader.failed() == !error->empty());
  return read;
}

TEST_CASE("format/protobuf_reader: every wire type and varints at their edges") {
  const uint64_t varints[] = {0, 1, 127, 128, 16383, 16384, (1ull << 32) - 1, 1ull << 63, ~0ull};
  ProtoWriter writer;
  for (uint64_t v : varints) writer.varint(1, v);
  writer.fixed32(2, 0xdeadbeef).bytes(3, "hello").bytes(536870911, "");  // the largest field number
  writer.raw(std::string("\x21\x01\x02\x03\x04\x05\x06\x07\x08", 9));  // field 4, fixed64
  std::string error;
  const Read read = read_all(writer.data(), &error);
  const std::vector<ProtobufField>& fields = read.fields;
  CHECK(error.empty());
  REQUIRE(fields.size() == 9 + 4);
  for (size_t i = 0; i < 9; ++i) {
    CHECK(fields[i].number == 1);
    CHECK(fields[i].wire_type == 0);
    CHECK(fields[i].value == varints[i]);
  }
  CHECK(fields[9].value == 0xdeadbeef);
  CHECK(fields[10].length == 5);
  CHECK(std::string(reinterpret_cast<const char*>(fields[10].bytes), 5) == "hello");
  CHECK(fields[11].number == 536870911);
  CHECK(fields[11].length == 0);
  CHECK(fields[12].number == 4);
  CHECK(fields[12].value == 0x0807060504030201ull);
}

TEST_CASE("format/protobuf_reader: malformed input stops with its reason") {
  const struct {
    std::string bytes;
    const char* error;
  } cases[] = {
      {std::string("\x08", 1), "a varint runs past the end"},
      {std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11), "longer than 64 bits"},
      {std::string("\x08\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 12), "longer than 64 bits"},
      {std::string("\x0d\x01\x02\x03", 4), "a fixed32 field runs past the end"},
      {std::string("\x09\x01", 2), "a fixed64 field runs past the end"},
      {std::string("\x0a\x05" "abcd", 6), "a length runs past the end"},
      {std::string("\x0a\xff\xff\xff\xff\x0f", 6), "a length runs past the end"},
      {std::string("\x0b", 1), "group or unknown wire type"},
      {std::string("\x0c", 1), "group or unknown wire type"},
      {std::string("\x0e", 1), "group or unknown wire type"},
      {std::string("\x02\x00", 2), "field number is 0"},
      {std::string("\x80\x80\x80\x80\x80\x01", 6), "above 2^29 - 1"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.error);
    std::string error;
    (void)read_all(c.bytes, &error);
    CHECK(error.find(c.error) != std::string::npos);
  }
}

}  // namespace
}  // namespace edgemt
