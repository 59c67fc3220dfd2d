// Text helpers shared by the two attention views (attention_views.h): the
// SVG picture (attention_svg.cc) and the terminal heat map
// (attention_terminal.cc). Both show pieces and sentences that may hold
// anything (invalid UTF-8, control characters, CJK), so both read code
// points the same way, clean text the same way and cut or wrap it to a width:
//
//   clean()        any bytes → well-formed UTF-8 without control characters
//   columns_of()   terminal columns (East Asian wide 2, combining marks 0)
//   fit()          cut to a number of columns, ending in "…" when cut
//   wrap()         greedy word wrap, widths as the caller measures them
//                  (em of a font for the SVG, terminal columns for the terminal)
//
// "Clean text" below is text that went through clean(). Nothing here
// depends on the locale. Plain functions, callable from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cli/attention_views.h"

namespace edgemt::cli::attention_text {

struct CodePoint {
  char32_t value;
  size_t size;  // bytes read
};

// The code point at text[at] (at < text.size()). Anything but well-formed
// UTF-8 (stray continuation bytes, overlongs, surrogates, a sequence cut
// short) reads as U+FFFD one byte at a time, so every byte is consumed
// exactly once.
CodePoint next_code_point(std::string_view text, size_t at);

// `text` made safe to show: well-formed UTF-8 without control characters
// (each replaced by U+FFFD), so it can carry no terminal escapes and is
// allowed in XML 1.0.
std::string clean(std::string_view text);

// Terminal columns of a code point, as wcwidth() has them for the scripts a
// translation is likely to hold (without depending on the locale): combining
// marks and zero-width characters 0, East Asian wide and fullwidth forms and
// emoji 2, the rest 1.
size_t columns_of(char32_t c);
// Terminal columns of clean text: the sum over its code points.
size_t columns_of(std::string_view clean_text);

// Clean text cut to at most `limit` columns, ending in "…" when cut.
std::string fit(std::string_view clean_text, size_t limit);

// sentence.weights[row, column].
float weight_at(const SentenceAttention& sentence, size_t row, size_t column);

// The width of clean text as `measure` (double(char32_t), the width of a
// code point) counts.
template <typename Measure>
double width_of(std::string_view clean_text, Measure measure) {
  double width = 0.0;
  for (size_t at = 0; at < clean_text.size();) {
    const CodePoint point = next_code_point(clean_text, at);
    width += measure(point.value);
    at += point.size;
  }
  return width;
}

// Greedy word wrap of clean text into lines no wider than `limit`, as
// `measure` (the width of a code point) counts; a word wider than a whole
// line is cut to fill lines of its own. Always at least one line.
template <typename Measure>
std::vector<std::string> wrap(std::string_view clean_text, double limit, Measure measure) {
  std::vector<std::string> lines;
  std::string line;
  double line_width = 0.0;
  const double space = measure(U' ');
  for (size_t start = 0; start < clean_text.size();) {
    size_t end = clean_text.find(' ', start);
    if (end == std::string_view::npos) end = clean_text.size();
    std::string_view word = clean_text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    double width = width_of(word, measure);
    if (!line.empty() && line_width + space + width > limit) {
      lines.push_back(line);
      line.clear();
      line_width = 0.0;
    }
    while (width > limit) {
      size_t cut = 0;
      double head = 0.0;
      while (cut < word.size()) {
        const CodePoint point = next_code_point(word, cut);
        if (cut > 0 && head + measure(point.value) > limit) break;
        head += measure(point.value);
        cut += point.size;
      }
      lines.emplace_back(word.substr(0, cut));
      word.remove_prefix(cut);
      width = width_of(word, measure);
    }
    if (word.empty()) continue;
    if (!line.empty()) {
      line += ' ';
      line_width += space;
    }
    line += word;
    line_width += width;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

}  // namespace edgemt::cli::attention_text
