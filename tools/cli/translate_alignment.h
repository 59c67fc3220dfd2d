// The attention of a translated sentence as the views and the aligner take
// it (SentenceAttention: pieces and weights), and a line's word alignment.
//
// The library does the aligning (edgemt/alignment.h: align_translation,
// line_alignment); this feeds it a LineWork. A split line's alignment
// refers to the line's own words, so `--align` numbers words as
// `line.split()` and `translation.split()` do, whether the line was split
// or not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/attention_views.h"
#include "cli/translate_pieces.h"
#include "cli/translate_work.h"
#include "edgemt/alignment.h"

namespace edgemt::cli {

// Source ids that are no word of the input: the target-language prefix and
// EOS (pad, bos and the rest are known to piece_words() by name).
struct SpecialSourceIds {
  bool has_target_prefix = false;  // source[0] is the --target-prefix token
  int32_t eos = -1;
};

// Sentence k of a translated line. Source pieces: one per source id (prefix
// and EOS included: the columns); target pieces: one per attention row, the
// generated pieces, then "</s>" for the row of the step that chose EOS.
// `weights` borrows line.sentences[k].attention. *source_special and
// *target_special mark the pieces that are no word.
SentenceAttention sentence_attention(const LineWork& line, size_t k, const PieceSpeller& pieces,
                                     const SpecialSourceIds& special,
                                     std::vector<bool>* source_special,
                                     std::vector<bool>* target_special);

// A line's word alignment: over the line's whitespace words and its
// translation's (`line`), and each sentence's over its own (`sentences`,
// one per LineWork::sentences). Empty for a blank or failed line.
struct LineAlignment {
  std::vector<WordPair> line;
  std::vector<std::vector<WordPair>> sentences;
};

LineAlignment align_line(const LineWork& line, const PieceSpeller& pieces,
                         const SpecialSourceIds& special);

}  // namespace edgemt::cli
