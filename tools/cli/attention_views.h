// Pictures of what the decoder attended to, for `edgemt translate`:
// --attention DIR writes attention_svg() of each sentence to a file, and
// --show-attention prints attention_terminal() under each translation.
//
// Both draw the same matrix (runtime/include/edgemt/translator.h,
// Translation::attention): one row per target piece, one column per source
// piece, each row a distribution over the source (a row sums to 1).
//
//               source pieces →
//             ▁A  ▁man  ▁is  …  </s>
//   ▁Ein      ██   ░░        …
//   ▁Mann          ██   ░░   …
//   …
//   </s>                         ██
//
// Pieces are shown as the vocabulary spells them, "▁" (U+2581) marking a
// word start; text that is not valid UTF-8 or holds control characters is
// shown with U+FFFD in their place, so neither output can carry terminal
// escapes or break the XML.
//
// Threading: plain functions of their arguments, callable from any thread.
// Output depends on nothing else (not the locale): the same input gives the
// same bytes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace edgemt::cli {

// One translated sentence and what its decoder attended to. Borrows
// `weights`: it must stay valid while the struct is used.
struct SentenceAttention {
  // One per column, as the model's vocabulary spells them ("▁A", "</s>", ">>fra<<").
  std::vector<std::string> source_pieces;
  // One per row: the generated pieces, then "</s>" when the EOS row exists.
  std::vector<std::string> target_pieces;
  // [rows, columns] row-major, rows = target_pieces.size(), columns = source_pieces.size().
  const float* weights = nullptr;
  std::string source_text;  // the input sentence (the title)
  std::string translation;  // the output sentence
};

// A complete standalone SVG document (UTF-8, no external references):
//   * a heading: the source sentence (also the document's <title>), the
//     translation under it, both wrapped to the picture's width;
//   * the source pieces across the top (rotated to read upwards), the target
//     pieces down the left side; pieces longer than 14 characters end in
//     "…", "▁" is drawn light grey, special pieces ("</s>", ">>fra<<") grey
//     and italic; hovering a label shows the whole piece;
//   * one <rect class="cell"> per weight, row by row, white at 0 through
//     blues to dark blue at 1 (weights outside [0, 1] are clamped, NaN is
//     drawn red); hovering shows "source piece → target piece: 0.734";
//   * a colour scale beside the grid marked 0, 0.5 and 1.
// Cells are 24 px square; the size grows with the piece counts and the
// longest labels. Labels are laid out for DejaVu Sans (any sans-serif font
// of similar width fits). No rows, no columns or null weights: the heading
// and a note saying so.
std::string attention_svg(const SentenceAttention& sentence);

// A compact heat map for a terminal, every line at most `max_width` columns
// (East Asian wide characters count 2; a max_width under 24 is taken as 24):
//
//   source   A man is riding a bike.
//   target   Ein Mann fährt auf einem Fahrrad.
//             01234567
//   ▁Ein     │▓░      │ ▁A
//   ▁Mann    │ █      │ ▁man
//   ▁fährt   │   █    │ ▁riding
//   …
//   </s>     │      ▒▒│ </s>
//   columns  0 ▁A  1 ▁man  2 ▁is  3 ▁riding  4 ▁a  5 ▁bike  6 .  7 </s>
//   shades   " " <0.2  ░ <0.4  ▒ <0.6  ▓ <0.8  █ ≥0.8
//
// One line per target piece: its label (at most 12 columns, "…" when cut),
// one character per source piece shaded by weight in five equal steps
// (" ░▒▓█"; NaN is "?"), and the source piece it attended to most. Source
// pieces are numbered above the grid (a digit per column, tens and hundreds
// on lines above for wider grids) and listed with their numbers under it,
// which reads better than labels written vertically. When the grid does not
// fit, the most-attended piece is cut, then dropped, then the rightmost columns,
// with a line saying which columns are missing. Ends with '\n'.
std::string attention_terminal(const SentenceAttention& sentence, size_t max_width);

}  // namespace edgemt::cli
