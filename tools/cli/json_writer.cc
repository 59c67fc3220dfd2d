#include "cli/json_writer.h"

#include <cmath>
#include <cstdio>

#include "edgemt/utf8.h"

namespace edgemt::cli {

namespace {

// Length of the well-formed UTF-8 sequence starting text[at], 0 if none.
size_t utf8_sequence_length(std::string_view text, size_t at) {
  const auto byte = static_cast<unsigned char>(text[at]);
  const size_t length = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xE ? 3
                                                              : (byte >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || at + length > text.size()) return 0;
  return is_valid_utf8(text.substr(at, length), nullptr) ? length : 0;
}

}  // namespace

void append_json_string(std::string_view text, std::string* out) {
  out->push_back('"');
  size_t at = 0;
  while (at < text.size()) {
    const char c = text[at];
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (byte < 0x20 || byte == 0x7F) {
      const char* named = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t"
                          : c == '\b' ? "\\b" : c == '\f' ? "\\f" : nullptr;
      if (named != nullptr) {
        out->append(named);
      } else {
        char escaped[8];
        std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(byte));
        out->append(escaped);
      }
    } else if (byte >= 0x80) {
      const size_t length = utf8_sequence_length(text, at);
      if (length == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD for a byte that starts no valid character
        ++at;
        continue;
      }
      out->append(text.substr(at, length));
      at += length;
      continue;
    } else {
      out->push_back(c);
    }
    ++at;
  }
  out->push_back('"');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_member_.empty()) {
    if (has_member_.back()) text_.push_back(',');
    has_member_.back() = true;
  }
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  text_.push_back('{');
  has_member_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  text_.push_back('}');
  has_member_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  text_.push_back('[');
  has_member_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  text_.push_back(']');
  has_member_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  append_json_string(name, &text_);
  text_.push_back(':');
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  append_json_string(text, &text_);
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  if (!std::isfinite(number)) return null();
  before_value();
  // %.9g round-trips a float and is valid JSON ("1e-05", "-0.5", "3").
  char digits[32];
  std::snprintf(digits, sizeof(digits), "%.9g", number);
  text_.append(digits);
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t number) {
  before_value();
  text_.append(std::to_string(number));
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  text_.append(flag ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  text_.append("null");
  return *this;
}

}  // namespace edgemt::cli
