#include "format/protobuf_reader.h"

#include <cstring>

namespace edgemt {

bool ProtobufReader::fail(const char* error) {
  error_ = error;
  return false;
}

// 7 bits a byte, least significant first, the top bit saying "more": at
// most 10 bytes, the 10th carrying only bit 63 (so it is 0 or 1, which also
// ends the varint there).
bool ProtobufReader::read_varint(uint64_t* value) {
  uint64_t result = 0;
  for (int i = 0;; ++i) {
    if (data_ == end_) return fail("a varint runs past the end");
    const uint8_t byte = *data_++;
    if (i == 9 && byte > 1) return fail("a varint is longer than 64 bits");
    result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) break;
  }
  *value = result;
  return true;
}

bool ProtobufReader::next(ProtobufField* field) {
  if (error_ != nullptr || data_ == end_) return false;
  uint64_t tag = 0;
  if (!read_varint(&tag)) return false;
  const uint64_t number = tag >> 3;
  if (number == 0 || number > 0x1fffffff) return fail("a field number is 0 or above 2^29 - 1");
  field->number = static_cast<uint32_t>(number);
  field->wire_type = static_cast<uint8_t>(tag & 7);
  field->value = 0;
  field->bytes = nullptr;
  field->length = 0;
  const size_t left = static_cast<size_t>(end_ - data_);
  switch (field->wire_type) {
    case 0:
      return read_varint(&field->value);
    case 1:
      if (left < 8) return fail("a fixed64 field runs past the end");
      std::memcpy(&field->value, data_, 8);  // little-endian hosts only (x86-64, AArch64)
      data_ += 8;
      return true;
    case 5: {
      if (left < 4) return fail("a fixed32 field runs past the end");
      uint32_t value;
      std::memcpy(&value, data_, 4);
      field->value = value;
      data_ += 4;
      return true;
    }
    case 2: {
      uint64_t length = 0;
      if (!read_varint(&length)) return false;
      if (length > static_cast<uint64_t>(end_ - data_)) return fail("a length runs past the end");
      field->bytes = data_;
      field->length = static_cast<size_t>(length);
      data_ += length;
      return true;
    }
    default:
      return fail("a field has a group or unknown wire type");
  }
}

}  // namespace edgemt
