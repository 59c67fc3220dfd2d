// cli::attention_svg and attention_terminal on small hand-made matrices:
// the colours and shades of hand-picked weights, worked out by hand; the
// labels, escaping and truncation; the width limit of the terminal view.
// Built into edgemt_cli_tests with tools/cli/attention_{text,svg,terminal}.cc
// (tests/CMakeLists.txt). tests/tools/test_attention_svg.py parses and
// renders an SVG the CLI wrote.
#include "cli/attention_views.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace edgemt::cli {
namespace {

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// The text between `open` and the next `close` after each `marker`, in order.
std::vector<std::string> after_each(const std::string& text, const std::string& marker,
                                    const std::string& open, const std::string& close) {
  std::vector<std::string> found;
  for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + 1)) {
    const size_t start = text.find(open, at) + open.size();
    found.push_back(text.substr(start, text.find(close, start) - start));
  }
  return found;
}

std::vector<std::string> cell_fills(const std::string& svg) {
  return after_each(svg, "<rect class=\"cell\"", "fill=\"", "\"");
}

std::vector<std::string> cell_titles(const std::string& svg) {
  return after_each(svg, "<rect class=\"cell\"", "<title>", "</title>");
}

int svg_size(const std::string& svg, const std::string& attribute) {
  const std::string value = after_each(svg, "<svg ", attribute + "=\"", "\"").at(0);
  return std::stoi(value);
}

// Terminal columns of test text: every code point one column, except the
// CJK ideographs the tests use (two).
size_t columns_of(const std::string& line) {
  size_t columns = 0;
  for (size_t at = 0; at < line.size(); ++at) {
    const unsigned char byte = static_cast<unsigned char>(line[at]);
    if ((byte & 0xC0) == 0x80) continue;
    columns += byte == 0xE6 ? 2 : 1;  // U+6000..U+6FFF: "日" (E6 97 A5), "本" (E6 9C AC)
  }
  return columns;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// The example of the interface: 3 target pieces x 4 source pieces.
struct Example {
  float weights[3 * 4] = {
      0.6f, 0.3f, 0.0f, 0.1f,  //
      0.4f, 0.3f, 0.3f, 0.0f,  //
      0.0f, 0.0f, 0.0f, 1.0f,  //
  };
  SentenceAttention sentence;
  Example() {
    sentence.source_pieces = {"▁A", "▁m", "an", "</s>"};
    sentence.target_pieces = {"▁Ein", "▁Mann", "</s>"};
    sentence.weights = weights;
    sentence.source_text = "A man";
    sentence.translation = "Ein Mann";
  }
};

TEST_CASE("cli/attention_views: cell colours of hand-picked weights") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // The scale's stops are at 0, 1/4, 1/2, 3/4, 1; between them each channel
  // is the rounded linear mix, e.g. 0.125: (255+200)/2, (255+221)/2,
  // (255+240)/2 = 227.5, 238, 247.5 -> 228, 238, 248.
  const float weights[3 * 4] = {
      0.0f,   0.25f, 0.5f,   1.0f,    //
      0.125f, 0.75f, 0.375f, 0.875f,  //
      nan,    -0.5f, 1.5f,   0.0625f,
  };
  const std::vector<std::string> expected_fills = {
      "#ffffff", "#c8ddf0", "#70a8d6", "#0a2a64",  //
      "#e4eef8", "#266cb2", "#9cc3e3", "#184b8b",  //
      "#d62728", "#ffffff", "#0a2a64", "#f1f7fb",  // NaN red; outside [0, 1] clamped
  };
  const std::vector<std::string> expected_weights = {
      "0.000", "0.250",  "0.500", "1.000",  //
      "0.125", "0.750",  "0.375", "0.875",  //
      "NaN",   "-0.500", "1.500", "0.063",
  };
  SentenceAttention sentence;
  sentence.source_pieces = {"▁a", "▁b", "▁c", "</s>"};
  sentence.target_pieces = {"▁x", "▁y", "</s>"};
  sentence.weights = weights;
  const std::string svg = attention_svg(sentence);
  CHECK(cell_fills(svg) == expected_fills);
  const std::vector<std::string> titles = cell_titles(svg);
  REQUIRE(titles.size() == expected_weights.size());
  for (size_t i = 0; i < titles.size(); ++i) {
    CAPTURE(titles[i]);
    CHECK(titles[i].substr(titles[i].rfind(": ") + 2) == expected_weights[i]);
  }
  CHECK(titles[1] == "▁b → ▁x: 0.250");
}

TEST_CASE("cli/attention_views: darker means more weight, all the way") {
  std::vector<float> weights;
  SentenceAttention sentence;
  for (int i = 0; i <= 200; ++i) {
    weights.push_back(static_cast<float>(i) / 200.0f);
    sentence.source_pieces.push_back("▁w");
  }
  sentence.target_pieces = {"▁t"};
  sentence.weights = weights.data();
  const std::vector<std::string> fills = cell_fills(attention_svg(sentence));
  REQUIRE(fills.size() == weights.size());
  for (size_t i = 1; i < fills.size(); ++i) {
    CAPTURE(i);
    for (size_t channel = 0; channel < 3; ++channel) {
      const int before = std::stoi(fills[i - 1].substr(1 + 2 * channel, 2), nullptr, 16);
      const int now = std::stoi(fills[i].substr(1 + 2 * channel, 2), nullptr, 16);
      CHECK(now <= before);
    }
  }
  CHECK(fills.front() == "#ffffff");
  CHECK(fills.back() == "#0a2a64");
}

TEST_CASE("cli/attention_views: the SVG document: title, heading, labels in order, scale") {
  const Example example;
  const std::string svg = attention_svg(example.sentence);
  CHECK(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 0) == 0);
  CHECK(svg.size() > 7);
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
  CHECK(occurrences(svg, "<title>A man</title>") == 1);
  CHECK(occurrences(svg, "class=\"source-text\"") == 1);
  CHECK(occurrences(svg, ">→ Ein Mann</text>") == 1);  // "→ Ein Mann", the translation
  CHECK(after_each(svg, "<g class=\"piece\"><title>source ", ": ", "</title>") ==
        std::vector<std::string>{"▁A", "▁m", "an", "&lt;/s&gt;"});
  CHECK(after_each(svg, "<g class=\"piece\"><title>target ", ": ", "</title>") ==
        std::vector<std::string>{"▁Ein", "▁Mann", "&lt;/s&gt;"});
  // The word-start mark is drawn apart (lighter) from the rest of the label.
  CHECK(occurrences(svg, "<tspan fill=\"#a0a8b4\">▁</tspan>Mann</text>") == 1);
  CHECK(occurrences(svg, "font-style=\"italic\">&lt;/s&gt;</text>") == 2);  // special pieces
  CHECK(cell_fills(svg).size() == 12);
  CHECK(occurrences(svg, "fill=\"url(#attention-scale)\"") == 1);
  CHECK(after_each(svg, "<text class=\"tick\"", ">", "</text>") ==
        std::vector<std::string>{"1", "0.5", "0"});
  CHECK(occurrences(svg, "<text") == occurrences(svg, "</text>"));
  CHECK(occurrences(svg, "<g") == occurrences(svg, "</g>"));
  CHECK(attention_svg(example.sentence) == svg);  // deterministic
}

TEST_CASE("cli/attention_views: the SVG grows with the pieces") {
  // (Past the minimum size: 360 px of content across, the colour scale's
  // height down.)
  std::vector<float> weights(30 * 50, 0.02f);
  SentenceAttention small;
  small.source_pieces.assign(40, "▁a");
  small.target_pieces.assign(20, "▁b");
  small.weights = weights.data();
  SentenceAttention wide = small;
  wide.source_pieces.assign(50, "▁a");
  SentenceAttention tall = small;
  tall.target_pieces.assign(30, "▁b");
  const std::string small_svg = attention_svg(small);
  CHECK(svg_size(attention_svg(wide), "width") - svg_size(small_svg, "width") == 10 * 24);
  CHECK(svg_size(attention_svg(tall), "height") - svg_size(small_svg, "height") == 10 * 24);
  // A longer source label needs more room above the grid.
  SentenceAttention long_labels = small;
  long_labels.source_pieces[2] = "▁riding";
  CHECK(svg_size(attention_svg(long_labels), "height") > svg_size(small_svg, "height"));
}

TEST_CASE("cli/attention_views: SVG text is escaped, cleaned and cut") {
  const float weights[2 * 2] = {0.5f, 0.5f, 0.5f, 0.5f};
  SentenceAttention sentence;
  sentence.source_pieces = {"▁<b>&\"'", "▁Donaudampfschifffahrtsgesellschaft"};
  sentence.target_pieces = {"\x1b[31m", "\xff\xfe"};
  sentence.weights = weights;
  sentence.source_text = "Tom & <Jerry>";
  sentence.translation = "\"Tom\" \x07";
  const std::string svg = attention_svg(sentence);
  CHECK(occurrences(svg, "<title>Tom &amp; &lt;Jerry&gt;</title>") == 1);
  CHECK(occurrences(svg, "&lt;b&gt;&amp;&quot;&apos;</text>") == 1);
  CHECK(occurrences(svg, "<b>") == 0);
  // 14 columns: the mark, 12 characters, "…"; the whole piece on hover.
  CHECK(occurrences(svg, "</tspan>Donaudampfsc…</text>") == 1);
  CHECK(occurrences(svg, "<title>source 1: ▁Donaudampfschifffahrtsgesellschaft</title>") == 1);
  // Control characters and bytes that are not UTF-8 become U+FFFD.
  CHECK(svg.find('\x1b') == std::string::npos);
  CHECK(svg.find('\x07') == std::string::npos);
  CHECK(svg.find('\xff') == std::string::npos);
  CHECK(occurrences(svg, ">\xef\xbf\xbd[31m</text>") == 1);
  CHECK(occurrences(svg, ">\xef\xbf\xbd\xef\xbf\xbd</text>") == 1);
  CHECK(occurrences(svg, "&quot;Tom&quot; \xef\xbf\xbd</text>") == 1);
}

TEST_CASE("cli/attention_views: an SVG without weights says so") {
  SentenceAttention sentence;
  sentence.source_pieces = {"▁a", "</s>"};
  sentence.source_text = "a";
  const std::string svg = attention_svg(sentence);
  CHECK(occurrences(svg, "No attention weights: no target pieces.") == 1);
  CHECK(occurrences(svg, "<title>a</title>") == 1);
  CHECK(cell_fills(svg).empty());
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
}

TEST_CASE("cli/attention_views: the terminal view of the example, by hand") {
  const Example example;
  // Shades in steps of 0.2: 0.6 ▓, 0.4 ▒, 0.3 ░, 0.1 and 0 blank, 1 █.
  const std::string expected =
      "source   A man\n"
      "target   Ein Mann\n"
      "       0123\n"
      "▁Ein  │▓░  │ ▁A\n"
      "▁Mann │▒░░ │ ▁A\n"
      "</s>  │   █│ </s>\n"
      "columns  0 ▁A  1 ▁m  2 an  3 </s>\n"
      "shades   \" \" <0.2  ░ <0.4  ▒ <0.6  ▓ <0.8  █ ≥0.8\n";
  CHECK(attention_terminal(example.sentence, 80) == expected);
}

TEST_CASE("cli/attention_views: terminal shades in five equal steps") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float weights[12] = {0.0f, 0.19f, 0.2f, 0.39f, 0.4f, 0.59f,
                             0.6f, 0.79f, 0.8f, 1.0f,  nan,  -1.0f};
  SentenceAttention sentence;
  sentence.source_pieces.assign(12, "x");
  sentence.target_pieces = {"t"};
  sentence.weights = weights;
  const std::vector<std::string> lines = lines_of(attention_terminal(sentence, 80));
  REQUIRE(lines.size() > 4);
  CHECK(lines[2] == std::string(13, ' ') + "1");  // tens of the ruler, over column 10
  CHECK(lines[3] == "   012345678901");           // units
  CHECK(lines[4] == "t │  ░░▒▒▓▓██? │ x");
}

TEST_CASE("cli/attention_views: the terminal view keeps to max_width") {
  std::vector<float> weights(2 * 30, 0.0f);
  for (size_t column = 0; column < 30; ++column) weights[30 + column] = column == 29 ? 1.0f : 0.0f;
  weights[0] = 1.0f;
  SentenceAttention sentence;
  for (size_t i = 0; i < 30; ++i) sentence.source_pieces.push_back("▁w" + std::to_string(i));
  sentence.target_pieces = {"▁日本", "▁a_rather_long_target_piece"};
  sentence.weights = weights.data();
  sentence.source_text = "a source sentence much longer than the narrowest terminal";
  sentence.translation = "eine Übersetzung";

  const std::string wide = attention_terminal(sentence, 200);
  CHECK(wide.find("not shown") == std::string::npos);
  CHECK(wide.find("│ ▁w29\n") != std::string::npos);  // the piece attended to most

  for (size_t max_width : {size_t{24}, size_t{30}, size_t{45}, size_t{60}}) {
    CAPTURE(max_width);
    const std::string text = attention_terminal(sentence, max_width);
    CHECK(text.back() == '\n');
    const std::vector<std::string> lines = lines_of(text);
    for (const std::string& line : lines) {
      CAPTURE(line);
      CHECK(columns_of(line) <= max_width);
    }
    // Labels are cut to 12 columns; the grid starts at the same column in
    // every row, wide characters counted twice.
    std::string first_row;
    std::string second_row;
    for (const std::string& line : lines) {
      if (line.rfind("▁日本", 0) == 0) first_row = line;
      if (line.rfind("▁a_rather_l… │", 0) == 0) second_row = line;
    }
    REQUIRE(!first_row.empty());
    REQUIRE(!second_row.empty());
    CHECK(columns_of(first_row.substr(0, first_row.find("│"))) ==
          columns_of(second_row.substr(0, second_row.find("│"))));
  }
  // 24 columns: 14 for the label and the bar, 9 cells, the closing bar.
  const std::string narrow = attention_terminal(sentence, 24);
  std::string note = narrow;  // wrapped to 24 columns: read it as one line
  for (char& c : note) c = c == '\n' ? ' ' : c;
  CHECK(note.find("(source pieces 9-29 not shown: the grid needs 45 columns)") !=
        std::string::npos);
  CHECK(narrow.find("8 ▁w8") != std::string::npos);
  CHECK(narrow.find("9 ▁w9") == std::string::npos);
  CHECK(attention_terminal(sentence, 3) == narrow);  // narrower than 24 is 24
}

TEST_CASE("cli/attention_views: a terminal view without weights says so") {
  SentenceAttention sentence;
  sentence.source_text = "a";
  sentence.translation = "b";
  CHECK(attention_terminal(sentence, 80) == "source   a\ntarget   b\n(no attention weights)\n");
}

}  // namespace
}  // namespace edgemt::cli
