// LineFinisher: what happens to each line the TranslationQueue hands on,
// in input order: its error on stderr ("edgemt: line N: ...; line left
// empty"), its sentences' translations joined, its attention pictures and
// word alignment when asked for, its output line, and the progress bar.
#pragma once

#include <cstddef>
#include <memory>

#include "cli/progress_bar.h"
#include "cli/translate_alignment.h"
#include "cli/translate_engine.h"
#include "cli/translate_output.h"
#include "cli/translate_pictures.h"
#include "cli/translate_work.h"

namespace edgemt::cli {

class LineFinisher {
 public:
  // Borrows all three, which must outlive this.
  LineFinisher(const TranslateSettings& settings, const TranslateEngine& engine,
               std::ostream& out, ProgressBar& progress);

  // --attention DIR: creates the folder and checks it can be written; false
  // with *error otherwise. Call before the first line.
  bool prepare(std::string* error) const;

  void finish(LineWork& line);
  void flush() { writer_.flush(); }

  // False once a line failed or a picture could not be written.
  bool all_ok() const { return all_ok_; }

 private:
  const PieceSpeller* pieces_;
  bool align_;
  SpecialSourceIds special_;
  LineWriter writer_;
  ProgressBar& progress_;
  std::unique_ptr<AttentionPictures> pictures_;  // null without --attention/--show-attention
  bool all_ok_ = true;
  size_t lines_ = 0;
  size_t sentences_ = 0;
};

}  // namespace edgemt::cli
