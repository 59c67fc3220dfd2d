#include "support/sentencepiece_builder.h"

#include <cstring>

namespace edgemt::testing {

void ProtoWriter::put_varint(uint64_t value) {
  while (value >= 0x80) {
    data_ += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  data_ += static_cast<char>(value);
}

ProtoWriter& ProtoWriter::varint(uint32_t field, uint64_t value) {
  put_varint(uint64_t{field} << 3 | 0);
  put_varint(value);
  return *this;
}

ProtoWriter& ProtoWriter::fixed32(uint32_t field, uint32_t value) {
  put_varint(uint64_t{field} << 3 | 5);
  for (int i = 0; i < 4; ++i) data_ += static_cast<char>((value >> (8 * i)) & 0xff);
  return *this;
}

ProtoWriter& ProtoWriter::bytes(uint32_t field, const std::string& value) {
  put_varint(uint64_t{field} << 3 | 2);
  put_varint(value.size());
  data_ += value;
  return *this;
}

ProtoWriter& ProtoWriter::raw(const std::string& value) {
  data_ += value;
  return *this;
}

std::string sentencepiece_piece(const std::string& text, float score, uint32_t type) {
  uint32_t bits;
  std::memcpy(&bits, &score, sizeof(bits));
  ProtoWriter piece;
  piece.bytes(1, text).fixed32(2, bits);
  if (type != 1) piece.varint(3, type);  // NORMAL is the default
  return piece.data();
}

std::string tiny_sentencepiece_model(uint32_t vocab_size) {
  std::vector<std::string> normal = {"\xe2\x96\x81"};  // "▁", the word boundary
  for (char c = 'a'; c <= 'z'; ++c) normal.emplace_back(1, c);
  normal.emplace_back(".");
  for (char a = 'a'; a <= 'z' && normal.size() + 4 < vocab_size; ++a) {
    for (char b = 'a'; b <= 'z' && normal.size() + 4 < vocab_size; ++b) {
      normal.push_back(std::string("\xe2\x96\x81") + a + b);
    }
  }
  ProtoWriter model;
  model.bytes(1, sentencepiece_piece("<pad>", 0.0f, 3));
  model.bytes(1, sentencepiece_piece("<unk>", 0.0f, 2));
  model.bytes(1, sentencepiece_piece("<s>", 0.0f, 3));
  model.bytes(1, sentencepiece_piece("</s>", 0.0f, 3));
  for (uint32_t i = 0; i + 4 < vocab_size && i < normal.size(); ++i) {
    model.bytes(1, sentencepiece_piece(normal[i], -1.0f - 0.01f * static_cast<float>(i), 1));
  }
  ProtoWriter trainer;
  trainer.varint(3, 1)                  // model_type UNIGRAM
      .varint(4, vocab_size)            // vocab_size
      .varint(40, 1)                    // unk_id
      .varint(41, 2)                    // bos_id
      .varint(42, 3)                    // eos_id
      .varint(43, 0);                   // pad_id
  model.bytes(2, trainer.data());
  ProtoWriter normalizer;
  normalizer.bytes(1, "identity").varint(3, 1).varint(4, 1).varint(5, 1);
  model.bytes(3, normalizer.data());
  return model.data();
}

}  // namespace edgemt::testing
