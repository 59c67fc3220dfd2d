// LineWriter: the output line of one input line, as plain text (the
// translation; with --align "translation ||| 0-0 1-2 ...") or as one JSON
// object (--json; translate_help() describes its fields). Every input line
// gives exactly one output line, whatever happened to it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/translate_alignment.h"
#include "cli/translate_pieces.h"
#include "cli/translate_work.h"

namespace edgemt::cli {

struct OutputOptions {
  bool json = false;
  bool align = false;
};

class LineWriter {
 public:
  // Borrows `out` and `pieces` (nullptr unless options.json), which must
  // outlive this.
  LineWriter(std::ostream& out, const OutputOptions& options, const PieceSpeller* pieces);

  // `alignment`: nullptr without --align, or for a line without one (blank,
  // failed).
  void write(const LineWork& line, const LineAlignment* alignment);
  void flush() { out_.flush(); }

 private:
  std::string json_line(const LineWork& line, const LineAlignment* alignment) const;

  std::ostream& out_;
  OutputOptions options_;
  const PieceSpeller* pieces_;
};

}  // namespace edgemt::cli
