// Where `edgemt translate` gets its lines, besides stdin and -i FILE:
//
//   texts_input_fd    texts given on the command line, as an input file
//                     (an anonymous in-memory file: the reader, the progress
//                     bar and the batching see a regular file, as with -i)
//   ParagraphJoiner   --paragraphs: hard-wrapped text, the lines up to a
//                     blank line joined into one input line
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/translate_work.h"

namespace edgemt::cli {

// A descriptor reading `texts`, one per line (a '\n' or '\r' inside a text
// becomes a space), positioned at its start; -1 with *error when the
// in-memory file cannot be made or written.
int texts_input_fd(const std::vector<std::string>& texts, std::string* error);

// An input line on its way to SourceMaker::make: the line, and when it was
// longer than --max-line-bytes (its text then empty), its length.
struct InputLine {
  LineWork line;
  bool too_long = false;
  size_t bytes = 0;
};

// Collects the lines of paragraphs: add() each input line in order; a
// non-blank line joins the paragraph being collected, a blank one ends it.
// What add() and finish() return, in order, are the input lines to
// translate: each paragraph (numbered by its first line, its lines joined
// by single spaces, each line's leading and trailing whitespace dropped;
// too long when the joined text passes --max-line-bytes) and each blank
// line as it is.
class ParagraphJoiner {
 public:
  explicit ParagraphJoiner(size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  std::vector<InputLine> add(InputLine input);
  // The paragraph still collected at the end of input, if any.
  std::vector<InputLine> finish();

 private:
  void take_paragraph(std::vector<InputLine>* out);

  size_t max_line_bytes_;
  InputLine paragraph_;
  bool collecting_ = false;
};

}  // namespace edgemt::cli
