#include "cli/inspect_lines.h"

#include <cstdarg>
#include <cstdio>
#include <utility>

namespace edgemt::cli {
namespace {

// Prints `first` (the label part, padded to `column`) then `value`; a value
// too long for the line is printed word by word, starting a new line
// indented to `column` whenever the next word would pass kInspectWidth.
void print_wrapped(std::string first, size_t column, const std::string& value) {
  std::string line = std::move(first);
  if (line.size() + value.size() <= kInspectWidth) {
    // Fits: printed as it is, its spacing (aligned columns) kept.
    std::printf("%s%s\n", line.c_str(), value.c_str());
    return;
  }
  bool line_has_words = false;
  const auto flush = [&]() {
    std::printf("%s\n", line.c_str());
    line.assign(column, ' ');
    line_has_words = false;
  };
  size_t at = 0;
  while (at < value.size()) {
    size_t end = value.find(' ', at);
    if (end == std::string::npos) end = value.size();
    std::string word = value.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    if (line_has_words && line.size() + 1 + word.size() > kInspectWidth) flush();
    // A word wider than the rest of the line (a long path): cut into pieces.
    while (line.size() + (line_has_words ? 1 : 0) + word.size() > kInspectWidth) {
      if (line_has_words || line.size() >= kInspectWidth) {
        flush();
        continue;
      }
      const size_t take = kInspectWidth - line.size();
      line += word.substr(0, take);
      word.erase(0, take);
      flush();
    }
    if (word.empty()) continue;
    if (line_has_words) line += ' ';
    line += word;
    line_has_words = true;
  }
  if (!line_has_words) {
    // An empty value, or the last piece of a cut word was printed: no
    // trailing blanks, and no blank continuation line.
    const size_t last = line.find_last_not_of(' ');
    if (last == std::string::npos) return;
    line.erase(last + 1);
  }
  std::printf("%s\n", line.c_str());
}

}  // namespace

std::string text_printf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  const int length = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string text(length > 0 ? static_cast<size_t>(length) : 0, '\0');
  if (length > 0) std::vsnprintf(&text[0], text.size() + 1, format, args);
  va_end(args);
  return text;
}

void print_field(size_t indent, const char* label, const std::string& value) {
  std::string first(indent, ' ');
  first += label;
  first += ' ';
  if (first.size() < kValueColumn) first.resize(kValueColumn, ' ');
  print_wrapped(std::move(first), kValueColumn, value);
}

void print_wrapped_line(const std::string& line) {
  if (line.size() <= kInspectWidth || line.size() <= kValueColumn) {
    std::printf("%s\n", line.c_str());
    return;
  }
  print_wrapped(line.substr(0, kValueColumn), kValueColumn, line.substr(kValueColumn));
}

std::string human_bytes(uint64_t bytes) {
  // A unit from 1000 of the one below: "1.0 MiB", not "1023.5 KiB".
  const double value = static_cast<double>(bytes);
  if (bytes >= uint64_t{1000} << 20) return text_printf("%.1f GiB", value / (1 << 30));
  if (bytes >= uint64_t{1000} << 10) return text_printf("%.1f MiB", value / (1 << 20));
  if (bytes >= uint64_t{1000}) return text_printf("%.1f KiB", value / (1 << 10));
  return text_printf("%llu B", static_cast<unsigned long long>(bytes));
}

std::string grouped_number(uint64_t value) {
  std::string digits = std::to_string(value);
  std::string text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text;
}

}  // namespace edgemt::cli
