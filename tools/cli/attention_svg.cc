// attention_svg() (attention_views.h): the heading, the piece labels, the
// grid of cells and the colour scale, laid out in px. Every number written
// is an integer or a fixed-point weight formatted by hand: printf's "%f"
// follows the locale's decimal separator.
#include "cli/attention_views.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/attention_text.h"

namespace edgemt::cli {
namespace {

using attention_text::clean;
using attention_text::columns_of;
using attention_text::fit;
using attention_text::weight_at;
using attention_text::width_of;
using attention_text::wrap;

constexpr std::string_view kWordStart = "\xe2\x96\x81";  // U+2581, SentencePiece's space

// How a piece is labelled: the word-start mark apart from the text, so the
// SVG can draw it lighter.
struct PieceLabel {
  bool word_start = false;  // began with "▁"
  bool special = false;     // looks like markup: "</s>", "<unk>", ">>fra<<", "<0x0A>"
  std::string text;         // clean, without the leading "▁"
  std::string whole;        // the clean piece, "▁" included
};

PieceLabel label_of(const std::string& piece) {
  PieceLabel label;
  label.whole = clean(piece);
  std::string_view rest = label.whole;
  if (rest.substr(0, kWordStart.size()) == kWordStart) {
    label.word_start = true;
    rest.remove_prefix(kWordStart.size());
  }
  label.text = std::string(rest);
  const std::string_view p = piece;
  label.special = (p.size() > 2 && p.front() == '<' && p.back() == '>') ||
                  (p.size() > 4 && p.substr(0, 2) == ">>" && p.substr(p.size() - 2) == "<<");
  return label;
}

std::string escape_xml(std::string_view clean_text) {
  std::string out;
  out.reserve(clean_text.size());
  for (char c : clean_text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// "0.734": three decimals, whatever the locale.
std::string format_weight(float weight) {
  if (std::isnan(weight)) return "NaN";
  const double clamped = std::clamp(static_cast<double>(weight), -1e9, 1e9);
  const long long thousandths = std::llround(clamped * 1000.0);
  const long long magnitude = thousandths < 0 ? -thousandths : thousandths;
  std::string fraction = std::to_string(magnitude % 1000);
  fraction.insert(0, 3 - fraction.size(), '0');
  return (thousandths < 0 ? "-" : "") + std::to_string(magnitude / 1000) + "." + fraction;
}

struct Rgb {
  int red, green, blue;
};

// The colour scale: white, then blues darkening to navy, evenly spaced over
// [0, 1] and linear between (as the SVG gradient of the legend draws it).
// Every channel falls from stop to stop, so darker always means more weight.
constexpr Rgb kScale[] = {
    {255, 255, 255}, {200, 221, 240}, {112, 168, 214}, {38, 108, 178}, {10, 42, 100}};
constexpr size_t kScaleSteps = sizeof(kScale) / sizeof(kScale[0]) - 1;
constexpr Rgb kNanColour = {214, 39, 40};

std::string hex(const Rgb& colour) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out = "#";
  for (int channel : {colour.red, colour.green, colour.blue}) {
    out += kDigits[(channel >> 4) & 0xF];
    out += kDigits[channel & 0xF];
  }
  return out;
}

Rgb colour_of(float weight) {
  if (std::isnan(weight)) return kNanColour;
  const double position = std::clamp(static_cast<double>(weight), 0.0, 1.0) * kScaleSteps;
  const size_t step = std::min(static_cast<size_t>(position), kScaleSteps - 1);
  const double t = position - static_cast<double>(step);
  const auto mix = [t](int low, int high) {
    return static_cast<int>(std::lround(low + (high - low) * t));
  };
  const Rgb& from = kScale[step];
  const Rgb& to = kScale[step + 1];
  return {mix(from.red, to.red), mix(from.green, to.green), mix(from.blue, to.blue)};
}

// Layout, in px.
constexpr int kMargin = 16;
constexpr int kCell = 24;
constexpr int kLabelFont = 13;
constexpr int kLabelGap = 6;    // between the labels and the grid
constexpr int kTitleFont = 16;  // bold
constexpr int kSubtitleFont = 14;
constexpr int kScaleGap = 18;  // between the grid and the colour scale
constexpr int kScaleWidth = 12;
constexpr int kScaleTickFont = 11;
constexpr int kMinimumContentWidth = 360;
constexpr size_t kSvgLabelColumns = 14;
constexpr double kBoldWidening = 1.1;
constexpr const char* kFontFamily = "DejaVu Sans, Verdana, Arial, sans-serif";

// Advance width of a code point in em, roughly as DejaVu Sans draws it
// (measured with rsvg-convert; lowercase text averages 0.55-0.6 em), a
// little generous so that labels never run into the margin.
double em_of(char32_t c) {
  const size_t columns = columns_of(c);
  if (columns == 0) return 0.0;
  if (columns == 2 || c == 0x2026) return 1.0;  // CJK, "…"
  if (c >= 0x2580 && c <= 0x259F) return 0.77;  // "▁" and the other block elements
  if (c >= 0x80) return 0.65;
  const char ascii = static_cast<char>(c);
  if (std::string_view("mwMW").find(ascii) != std::string_view::npos) return 0.95;
  if (std::string_view("ijlI.,:;'!|()[] ").find(ascii) != std::string_view::npos) return 0.36;
  if (std::string_view("frt").find(ascii) != std::string_view::npos) return 0.42;
  if (ascii >= 'A' && ascii <= 'Z') return 0.74;
  return 0.62;
}

// The label as drawn: the word-start mark, then the text cut so that both
// take at most kSvgLabelColumns.
std::string drawn_text(const PieceLabel& label) {
  return fit(label.text, kSvgLabelColumns - (label.word_start ? 1 : 0));
}

int label_px(const PieceLabel& label) {
  const double em = (label.word_start ? em_of(0x2581) : 0.0) + width_of(drawn_text(label), em_of);
  return static_cast<int>(std::ceil(em * kLabelFont));
}

// A piece's label as SVG text content: the word-start mark lighter, the
// rest cut to kSvgLabelColumns.
std::string label_content(const PieceLabel& label) {
  std::string out;
  if (label.word_start) out += "<tspan fill=\"#a0a8b4\">\xe2\x96\x81</tspan>";
  out += escape_xml(drawn_text(label));
  return out;
}

std::string label_style(const PieceLabel& label) {
  return label.special ? " fill=\"#7a828e\" font-style=\"italic\"" : " fill=\"#1f2328\"";
}

}  // namespace

std::string attention_svg(const SentenceAttention& sentence) {
  const size_t rows = sentence.target_pieces.size();
  const size_t columns = sentence.source_pieces.size();
  const bool empty = rows == 0 || columns == 0 || sentence.weights == nullptr;

  std::vector<PieceLabel> source_labels;
  std::vector<PieceLabel> target_labels;
  for (const std::string& piece : sentence.source_pieces) source_labels.push_back(label_of(piece));
  for (const std::string& piece : sentence.target_pieces) target_labels.push_back(label_of(piece));
  int top_labels_px = 0;   // the height the rotated source labels take
  int left_labels_px = 0;  // the width of the target labels
  for (const PieceLabel& label : source_labels) {
    top_labels_px = std::max(top_labels_px, label_px(label));
  }
  for (const PieceLabel& label : target_labels) {
    left_labels_px = std::max(left_labels_px, label_px(label));
  }

  // Across: margin | target labels | grid | scale and its ticks | margin.
  const int grid_width = empty ? 0 : static_cast<int>(columns) * kCell + 1;
  const int grid_height = empty ? 0 : static_cast<int>(rows) * kCell + 1;
  const int scale_height = std::clamp(grid_height, 96, 240);
  const int scale_block = kScaleGap + kScaleWidth + 6 + 2 * kScaleTickFont;  // ticks "0.5"
  const int content_width = std::max(
      kMinimumContentWidth, empty ? 0 : left_labels_px + kLabelGap + grid_width + scale_block);
  const int width = content_width + 2 * kMargin;

  // Down: margin | heading | source labels | grid | margin.
  const std::string source_text = clean(sentence.source_text);
  const std::string translation = "\xe2\x86\x92 " + clean(sentence.translation);  // "→ "
  const std::vector<std::string> title_lines =
      wrap(source_text, content_width / (kTitleFont * kBoldWidening), em_of);
  const std::vector<std::string> subtitle_lines =
      wrap(translation, static_cast<double>(content_width) / kSubtitleFont, em_of);
  const int title_line_px = kTitleFont + 6;
  const int subtitle_line_px = kSubtitleFont + 5;
  const int heading_px = static_cast<int>(title_lines.size()) * title_line_px +
                         static_cast<int>(subtitle_lines.size()) * subtitle_line_px;
  const int grid_x = kMargin + left_labels_px + kLabelGap;
  const int grid_y = kMargin + heading_px + 18 + top_labels_px + kLabelGap;
  const int body_px = empty ? 24 : std::max(grid_height, scale_height + kScaleTickFont);
  const int height = grid_y + body_px + kMargin;

  std::string svg;
  svg.reserve(2048 + rows * columns * 160);
  const std::string w = std::to_string(width);
  const std::string h = std::to_string(height);
  svg += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + w + "\" height=\"" +
         h + "\" viewBox=\"0 0 " + w + " " + h + "\" font-family=\"" + kFontFamily + "\">\n";
  svg += "<title>" + escape_xml(source_text) + "</title>\n";
  svg += "<desc>Attention weights: one row per target piece (" + std::to_string(rows) +
         "), one column per source piece (" + std::to_string(columns) +
         "); darker is more weight.</desc>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";

  // Heading: the source sentence, the translation under it.
  svg += "<g class=\"heading\">\n";
  int y = kMargin;
  for (const std::string& line : title_lines) {
    y += title_line_px;
    svg += "<text class=\"source-text\" x=\"" + std::to_string(kMargin) + "\" y=\"" +
           std::to_string(y - 6) + "\" font-size=\"" + std::to_string(kTitleFont) +
           "\" font-weight=\"bold\" fill=\"#1f2328\">" + escape_xml(line) + "</text>\n";
  }
  for (const std::string& line : subtitle_lines) {
    y += subtitle_line_px;
    svg += "<text class=\"translation\" x=\"" + std::to_string(kMargin) + "\" y=\"" +
           std::to_string(y - 4) + "\" font-size=\"" + std::to_string(kSubtitleFont) +
           "\" fill=\"#57606a\">" + escape_xml(line) + "</text>\n";
  }
  svg += "</g>\n";

  if (empty) {
    svg += "<text class=\"note\" x=\"" + std::to_string(kMargin) + "\" y=\"" +
           std::to_string(grid_y + 16) + "\" font-size=\"13\" fill=\"#57606a\">" +
           "No attention weights: " +
           (rows == 0      ? "no target pieces"
            : columns == 0 ? "no source pieces"
                           : "none given") +
           ".</text>\n</svg>\n";
    return svg;
  }

  const std::string font = " font-size=\"" + std::to_string(kLabelFont) + "\"";
  // Source labels: read upwards from just above their column; the baseline
  // sits right of the column's centre so the glyphs centre on it.
  svg += "<g class=\"source-pieces\"" + font + ">\n";
  for (size_t column = 0; column < columns; ++column) {
    const int x = grid_x + static_cast<int>(column) * kCell + kCell / 2 + kLabelFont * 35 / 100 + 1;
    const int label_y = grid_y - kLabelGap;
    const std::string at = std::to_string(x) + "," + std::to_string(label_y);
    svg += "<g class=\"piece\"><title>source " + std::to_string(column) + ": " +
           escape_xml(source_labels[column].whole) + "</title><text x=\"" + std::to_string(x) +
           "\" y=\"" + std::to_string(label_y) + "\" transform=\"rotate(-90," + at + ")\"" +
           label_style(source_labels[column]) + ">" + label_content(source_labels[column]) +
           "</text></g>\n";
  }
  svg += "</g>\n";

  // Target labels: right-aligned against the grid, centred on their row.
  svg += "<g class=\"target-pieces\"" + font + " text-anchor=\"end\">\n";
  for (size_t row = 0; row < rows; ++row) {
    const int label_y =
        grid_y + static_cast<int>(row) * kCell + kCell / 2 + kLabelFont * 35 / 100 + 1;
    svg += "<g class=\"piece\"><title>target " + std::to_string(row) + ": " +
           escape_xml(target_labels[row].whole) + "</title><text x=\"" +
           std::to_string(grid_x - kLabelGap) + "\" y=\"" + std::to_string(label_y) + "\"" +
           label_style(target_labels[row]) + ">" + label_content(target_labels[row]) +
           "</text></g>\n";
  }
  svg += "</g>\n";

  // The grid: a light grey ground that shows as 1 px rules between cells.
  svg += "<g class=\"cells\">\n";
  svg += "<rect class=\"grid\" x=\"" + std::to_string(grid_x) + "\" y=\"" + std::to_string(grid_y) +
         "\" width=\"" + std::to_string(grid_width) + "\" height=\"" + std::to_string(grid_height) +
         "\" fill=\"#d8dde3\"/>\n";
  const std::string cell_size = std::to_string(kCell - 1);
  for (size_t row = 0; row < rows; ++row) {
    for (size_t column = 0; column < columns; ++column) {
      const float weight = weight_at(sentence, row, column);
      svg += "<rect class=\"cell\" x=\"" +
             std::to_string(grid_x + 1 + static_cast<int>(column) * kCell) + "\" y=\"" +
             std::to_string(grid_y + 1 + static_cast<int>(row) * kCell) + "\" width=\"" +
             cell_size + "\" height=\"" + cell_size + "\" fill=\"" + hex(colour_of(weight)) +
             "\"><title>" + escape_xml(source_labels[column].whole) + " \xe2\x86\x92 " +
             escape_xml(target_labels[row].whole) + ": " + format_weight(weight) +
             "</title></rect>\n";
    }
  }
  svg += "</g>\n";

  // The colour scale: the same stops as the cells, 1 at the top.
  const int scale_x = grid_x + grid_width + kScaleGap;
  svg += "<defs><linearGradient id=\"attention-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (size_t stop = 0; stop <= kScaleSteps; ++stop) {
    svg += "<stop offset=\"" + std::to_string(stop * 100 / kScaleSteps) + "%\" stop-color=\"" +
           hex(kScale[stop]) + "\"/>";
  }
  svg += "</linearGradient></defs>\n";
  svg +=
      "<g class=\"scale\" font-size=\"" + std::to_string(kScaleTickFont) + "\" fill=\"#57606a\">\n";
  svg += "<rect x=\"" + std::to_string(scale_x) + "\" y=\"" + std::to_string(grid_y) +
         "\" width=\"" + std::to_string(kScaleWidth) + "\" height=\"" +
         std::to_string(scale_height) +
         "\" fill=\"url(#attention-scale)\" stroke=\"#d8dde3\" stroke-width=\"1\"/>\n";
  const std::pair<const char*, int> ticks[] = {
      {"1", 0}, {"0.5", scale_height / 2}, {"0", scale_height}};
  for (const auto& [text, offset] : ticks) {
    const int tick_y = grid_y + offset;
    svg += "<line x1=\"" + std::to_string(scale_x + kScaleWidth) + "\" y1=\"" +
           std::to_string(tick_y) + "\" x2=\"" + std::to_string(scale_x + kScaleWidth + 3) +
           "\" y2=\"" + std::to_string(tick_y) + "\" stroke=\"#8c959f\"/>";
    svg += "<text class=\"tick\" x=\"" + std::to_string(scale_x + kScaleWidth + 6) + "\" y=\"" +
           std::to_string(tick_y + 4) + "\">" + text + "</text>\n";
  }
  svg += "</g>\n</svg>\n";
  return svg;
}

}  // namespace edgemt::cli
