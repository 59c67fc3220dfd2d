#include "cli/attention_text.h"

#include <cstdint>

namespace edgemt::cli::attention_text {
namespace {

constexpr std::string_view kEllipsis = "\xe2\x80\xa6";  // U+2026
constexpr char32_t kReplacement = 0xFFFD;

void append_utf8(char32_t value, std::string* out) {
  if (value < 0x80) {
    *out += static_cast<char>(value);
  } else if (value < 0x800) {
    *out += static_cast<char>(0xC0 | (value >> 6));
    *out += static_cast<char>(0x80 | (value & 0x3F));
  } else if (value < 0x10000) {
    *out += static_cast<char>(0xE0 | (value >> 12));
    *out += static_cast<char>(0x80 | ((value >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (value & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (value >> 18));
    *out += static_cast<char>(0x80 | ((value >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((value >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (value & 0x3F));
  }
}

// Control characters would move a terminal's cursor (or worse: escape
// sequences) and are not allowed in XML 1.0; U+FFFE/U+FFFF neither.
bool printable(char32_t value) {
  if (value < 0x20 || (value >= 0x7F && value < 0xA0)) return false;
  return value != 0xFFFE && value != 0xFFFF;
}

}  // namespace

CodePoint next_code_point(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[at + i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return {lead, 1};
  size_t size = 0;
  char32_t value = 0;
  char32_t smallest = 0;
  if ((lead & 0xE0) == 0xC0) {
    size = 2;
    value = lead & 0x1Fu;
    smallest = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    size = 3;
    value = lead & 0x0Fu;
    smallest = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    size = 4;
    value = lead & 0x07u;
    smallest = 0x10000;
  } else {
    return {kReplacement, 1};
  }
  if (at + size > text.size()) return {kReplacement, 1};
  for (size_t i = 1; i < size; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return {kReplacement, 1};
    value = (value << 6) | (byte(i) & 0x3Fu);
  }
  if (value < smallest || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
    return {kReplacement, 1};
  }
  return {value, size};
}

std::string clean(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const CodePoint point = next_code_point(text, at);
    append_utf8(printable(point.value) ? point.value : kReplacement, &out);
    at += point.size;
  }
  return out;
}

size_t columns_of(char32_t c) {
  const auto in = [c](char32_t first, char32_t last) { return c >= first && c <= last; };
  if (in(0x0300, 0x036F) || in(0x0483, 0x0489) || in(0x0591, 0x05BD) || in(0x064B, 0x065F) ||
      in(0x0E31, 0x0E31) || in(0x0E34, 0x0E3A) || in(0x0E47, 0x0E4E) || in(0x1AB0, 0x1AFF) ||
      in(0x1DC0, 0x1DFF) || in(0x200B, 0x200F) || in(0x20D0, 0x20FF) || in(0xFE00, 0xFE0F) ||
      in(0xFE20, 0xFE2F)) {
    return 0;
  }
  if (in(0x1100, 0x115F) || in(0x2E80, 0x303E) || in(0x3041, 0x33FF) || in(0x3400, 0x4DBF) ||
      in(0x4E00, 0x9FFF) || in(0xA000, 0xA4CF) || in(0xAC00, 0xD7A3) || in(0xF900, 0xFAFF) ||
      in(0xFE30, 0xFE4F) || in(0xFF00, 0xFF60) || in(0xFFE0, 0xFFE6) || in(0x1F300, 0x1F64F) ||
      in(0x1F900, 0x1F9FF) || in(0x20000, 0x3FFFD)) {
    return 2;
  }
  return 1;
}

size_t columns_of(std::string_view clean_text) {
  size_t columns = 0;
  for (size_t at = 0; at < clean_text.size();) {
    const CodePoint point = next_code_point(clean_text, at);
    columns += columns_of(point.value);
    at += point.size;
  }
  return columns;
}

std::string fit(std::string_view clean_text, size_t limit) {
  if (columns_of(clean_text) <= limit) return std::string(clean_text);
  std::string out;
  size_t used = 0;
  for (size_t at = 0; at < clean_text.size() && limit > 0;) {
    const CodePoint point = next_code_point(clean_text, at);
    const size_t width = columns_of(point.value);
    if (used + width > limit - 1) break;  // keep a column for "…"
    out.append(clean_text.substr(at, point.size));
    used += width;
    at += point.size;
  }
  if (limit > 0) out += kEllipsis;
  return out;
}

float weight_at(const SentenceAttention& sentence, size_t row, size_t column) {
  return sentence.weights[row * sentence.source_pieces.size() + column];
}

}  // namespace edgemt::cli::attention_text
