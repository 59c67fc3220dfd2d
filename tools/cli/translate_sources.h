// SourceMaker: an input line -> its sentences' source ids, or the reason the
// line cannot be translated (too long, not UTF-8, a sentence longer than
// the model's position table).
//
// With splitting on, a line of several sentences (edgemt/sentences.h)
// gives one source per sentence, and a sentence with more tokens than the
// model takes is cut into pieces that fit (edgemt/sentences.h); a line of
// one sentence that fits, and every line with splitting off, gives one
// source of the whole line, exactly as the tokenizer encodes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/translate_work.h"
#include "edgemt/sentences.h"
#include "edgemt/tokenizer.h"

namespace edgemt::cli {

struct SourceOptions {
  const int32_t* target_prefix = nullptr;  // put first in every source; nullptr: none
  size_t max_source_len = 0;               // the translator's Limits::max_source_len
  size_t max_line_bytes = 0;               // --max-line-bytes (for the message)
  bool split_sentences = true;
  std::string language;  // the splitting rules' language; "" = generic rules
};

class SourceMaker {
 public:
  // Borrows the tokenizer, which must outlive this.
  SourceMaker(const Tokenizer& tokenizer, SourceOptions options);

  // line->text holds the line (unless too_long: then `bytes` is its length):
  // fills line->sentences (none for a blank line) and line->split, or
  // line->error.
  void make(LineWork* line, bool too_long, size_t bytes) const;

 private:
  const Tokenizer& tokenizer_;
  SourceOptions options_;
};

// The output line of a translated line: its one sentence's translation, or
// a split line's sentences' translations joined as the line had them.
std::string join_translations(const LineWork& line);

}  // namespace edgemt::cli
