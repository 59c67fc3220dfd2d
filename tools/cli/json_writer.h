// JsonWriter: one JSON value built as text, for `edgemt translate --json`
// (one object per input line, so each line of output parses on its own).
//
// Strings are written as valid UTF-8 whatever they hold: '"', '\\' and the
// control characters are escaped (\n, \t, ... or \u00XX), other text is kept
// as it is, and bytes that are not well-formed UTF-8 become U+FFFD. Numbers
// that are not finite are written as null (JSON has no NaN).
//
// The caller nests begin/end calls correctly and gives a key before each
// value inside an object; the writer adds the commas and colons. No
// whitespace is written, so a value never spans lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace edgemt::cli {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);
  JsonWriter& value(uint64_t number);
  JsonWriter& value(bool flag);
  JsonWriter& null();

  const std::string& text() const { return text_; }

 private:
  void before_value();

  std::string text_;
  // One entry per open object or array: whether it has a member yet.
  std::vector<bool> has_member_;
  bool after_key_ = false;
};

// `text` as a JSON string literal, quotes included (the escaping above).
void append_json_string(std::string_view text, std::string* out);

}  // namespace edgemt::cli
