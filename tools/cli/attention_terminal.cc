// attention_terminal() (attention_views.h): the heat map as lines of text,
// one shaded character per weight, with a column ruler above the grid and
// the numbered source pieces under it.
#include "cli/attention_views.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "cli/attention_text.h"

namespace edgemt::cli {
namespace {

using attention_text::clean;
using attention_text::columns_of;
using attention_text::fit;
using attention_text::weight_at;
using attention_text::wrap;

// Clean text padded with spaces to `width` columns.
std::string pad(const std::string& clean_text, size_t width) {
  const size_t columns = columns_of(clean_text);
  return columns >= width ? clean_text : clean_text + std::string(width - columns, ' ');
}

// A code point's width for wrap(): terminal columns.
double terminal_columns_of(char32_t c) { return static_cast<double>(columns_of(c)); }

constexpr size_t kNarrowest = 24;
constexpr size_t kTerminalLabelColumns = 12;
constexpr std::string_view kShades[] = {" ", "\xe2\x96\x91", "\xe2\x96\x92", "\xe2\x96\x93",
                                        "\xe2\x96\x88"};  // " ░▒▓█"
constexpr std::string_view kBar = "\xe2\x94\x82";         // "│"
// Captions, all as wide, so what follows them lines up.
constexpr std::string_view kSourceCaption = "source   ";
constexpr std::string_view kTargetCaption = "target   ";
constexpr std::string_view kColumnsCaption = "columns  ";
constexpr std::string_view kShadesCaption = "shades   ";
constexpr size_t kCaptionColumns = kSourceCaption.size();

// Five equal steps: [0, 0.2) blank ... [0.8, 1] full.
std::string_view shade_of(float weight) {
  if (std::isnan(weight)) return "?";
  const double level = std::floor(std::clamp(static_cast<double>(weight), 0.0, 1.0) * 5.0);
  return kShades[std::min(static_cast<size_t>(level), size_t{4})];
}

// Entries after a caption on lines of at most `width` columns, two spaces
// apart; continuation lines indented under the first entry. Entries must
// fit in width - kCaptionColumns.
void append_entries(std::string_view caption, const std::vector<std::string>& entries, size_t width,
                    std::string* out) {
  std::string line(caption);
  size_t line_columns = kCaptionColumns;
  bool line_has_entry = false;
  for (const std::string& entry : entries) {
    const size_t columns = columns_of(entry);
    if (line_has_entry && line_columns + 2 + columns > width) {
      *out += line + "\n";
      line.assign(kCaptionColumns, ' ');
      line_columns = kCaptionColumns;
      line_has_entry = false;
    }
    if (line_has_entry) {
      line += "  ";
      line_columns += 2;
    }
    line += entry;
    line_columns += columns;
    line_has_entry = true;
  }
  *out += line + "\n";
}

// Column numbers over the grid: units on the last line, tens (and
// hundreds ...) above, each written only where it changes (10, 20, ...).
std::string ruler(size_t indent, size_t columns) {
  size_t largest_place = 1;
  while (columns > 0 && largest_place * 10 <= columns - 1) largest_place *= 10;
  std::string out;
  for (size_t place = largest_place; place >= 1; place /= 10) {
    std::string line(indent, ' ');
    for (size_t column = 0; column < columns; ++column) {
      const bool written = place == 1 || (column % place == 0 && column >= place);
      line += written ? static_cast<char>('0' + (column / place) % 10) : ' ';
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string attention_terminal(const SentenceAttention& sentence, size_t max_width) {
  const size_t width = std::max(max_width, kNarrowest);
  const size_t rows = sentence.target_pieces.size();
  const size_t columns = sentence.source_pieces.size();
  std::string out;
  out += std::string(kSourceCaption) + fit(clean(sentence.source_text), width - kCaptionColumns) +
         "\n";
  out += std::string(kTargetCaption) + fit(clean(sentence.translation), width - kCaptionColumns) +
         "\n";
  if (rows == 0 || columns == 0 || sentence.weights == nullptr) {
    out += "(no attention weights)\n";
    return out;
  }

  std::vector<std::string> source_labels;
  std::vector<std::string> target_labels;
  size_t source_label_columns = 1;
  size_t target_label_columns = 1;
  for (const std::string& piece : sentence.source_pieces) {
    source_labels.push_back(fit(clean(piece), kTerminalLabelColumns));
    source_label_columns = std::max(source_label_columns, columns_of(source_labels.back()));
  }
  for (const std::string& piece : sentence.target_pieces) {
    target_labels.push_back(fit(clean(piece), kTerminalLabelColumns));
    target_label_columns = std::max(target_label_columns, columns_of(target_labels.back()));
  }

  // A row: label, " │", a cell per column, "│", then " " and the source
  // piece the row attended to most. Too wide: that piece is cut or dropped
  // first, then the rightmost columns (kNarrowest leaves at least 9).
  const size_t grid_start = target_label_columns + 2;
  const size_t grid_end = grid_start + columns + 1;
  size_t best_columns = source_label_columns;
  if (grid_end + 1 + best_columns > width) {
    best_columns = width > grid_end + 1 ? width - grid_end - 1 : 0;
    if (best_columns < 4) best_columns = 0;  // "▁a…" says little
  }
  const size_t shown = grid_end > width ? width - grid_start - 1 : columns;

  out += ruler(grid_start, shown);
  for (size_t row = 0; row < rows; ++row) {
    std::string line = pad(target_labels[row], target_label_columns) + " " + std::string(kBar);
    size_t best = 0;
    for (size_t column = 0; column < columns; ++column) {
      const float weight = weight_at(sentence, row, column);
      if (column < shown) line += shade_of(weight);
      if (weight > weight_at(sentence, row, best)) best = column;  // ties: the first
    }
    line += kBar;
    if (best_columns > 0) line += " " + fit(source_labels[best], best_columns);
    out += line + "\n";
  }
  if (shown < columns) {
    const std::string note = "(source pieces " + std::to_string(shown) + "-" +
                             std::to_string(columns - 1) + " not shown: the grid needs " +
                             std::to_string(grid_end) + " columns)";
    for (const std::string& line : wrap(note, static_cast<double>(width), terminal_columns_of)) {
      out += line + "\n";
    }
  }

  std::vector<std::string> legend;
  for (size_t column = 0; column < shown; ++column) {
    legend.push_back(
        fit(std::to_string(column) + " " + source_labels[column], width - kCaptionColumns));
  }
  append_entries(kColumnsCaption, legend, width, &out);
  append_entries(kShadesCaption,
                 {"\" \" <0.2", "\xe2\x96\x91 <0.4", "\xe2\x96\x92 <0.6", "\xe2\x96\x93 <0.8",
                  "\xe2\x96\x88 \xe2\x89\xa5"
                  "0.8"},
                 width, &out);
  return out;
}

}  // namespace edgemt::cli
