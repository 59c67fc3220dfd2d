// ProtobufReader: the fields of one protobuf message, in wire order, with
// every length and varint bounds-checked. Just enough of the wire format
// (https://protobuf.dev/programming-guides/encoding/) for the verifier to
// walk an embedded SentencePiece ModelProto without a protobuf library.
//
//   ProtobufReader reader(bytes, size);
//   ProtobufField field;
//   while (reader.next(&field)) { ... field.number, field.wire_type ... }
//   if (reader.failed()) { ... reader.error() ... }
//
// Wire types: 0 varint (at most 10 bytes, 64 bits), 1 fixed64, 2 length-delimited
// (bytes, strings, sub-messages, packed), 5 fixed32. Groups (3, 4), unknown
// wire types and field number 0 are malformed here: SentencePiece models
// never contain them. Reads nothing outside [data, data + size); never
// allocates. The field's `bytes` point into the caller's buffer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {

struct ProtobufField {
  uint32_t number = 0;
  uint8_t wire_type = 0;
  uint64_t value = 0;              // varint, fixed32 and fixed64 fields
  const uint8_t* bytes = nullptr;  // length-delimited fields
  size_t length = 0;
};

class ProtobufReader {
 public:
  ProtobufReader(const uint8_t* data, size_t size) : data_(data), end_(data + size) {}

  // The next field into *field; false at the end of the message or on
  // malformed input (then failed() is true and error() says what).
  bool next(ProtobufField* field);
  bool failed() const { return error_ != nullptr; }
  const char* error() const { return error_ != nullptr ? error_ : ""; }
  // Bytes read so far (where the error is, after a failure).
  size_t offset(const uint8_t* begin) const { return static_cast<size_t>(data_ - begin); }

 private:
  bool read_varint(uint64_t* value);
  bool fail(const char* error);

  const uint8_t* data_;
  const uint8_t* end_;
  const char* error_ = nullptr;  // a static string
};

}  // namespace edgemt
