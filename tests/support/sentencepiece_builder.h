// A real, valid SentencePiece ModelProto for test models, written by hand in
// the protobuf wire format: ModelBuilder's default tokenizer (the model
// verifier checks the embedded tokenizer, so a stand-in no longer passes).
//
// Pieces: <pad> 0, <unk> 1, <s> 2, </s> 3 (the ModelBuilder's special
// tokens), then "▁", the letters a-z, ".", and "▁a"… two-character pieces up
// to `vocab_size`; unigram model, identity normalization (no charsmap).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edgemt::testing {

// vocab_size >= 5.
std::string tiny_sentencepiece_model(uint32_t vocab_size);

// The protobuf wire format, enough to write (and rewrite, in tests) a
// ModelProto: a tag is (field << 3) | wire type.
class ProtoWriter {
 public:
  ProtoWriter& varint(uint32_t field, uint64_t value);
  ProtoWriter& fixed32(uint32_t field, uint32_t value);
  ProtoWriter& bytes(uint32_t field, const std::string& value);  // also strings, messages
  ProtoWriter& raw(const std::string& value);  // bytes as they are
  const std::string& data() const { return data_; }

 private:
  void put_varint(uint64_t value);
  std::string data_;
};

// One ModelProto.pieces entry (piece text, score, type: 1 normal, 2 unknown,
// 3 control).
std::string sentencepiece_piece(const std::string& text, float score, uint32_t type);

}  // namespace edgemt::testing
