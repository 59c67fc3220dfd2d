// AttentionPictures: --attention DIR (one SVG heat map per translated
// sentence: DIR/<line>.svg, or DIR/<line>-<k>.svg for the k-th sentence of
// a split line, k from 1) and --show-attention (the terminal heat map of
// each sentence on stderr, so stdout keeps one line per input line).
#pragma once

#include <cstddef>
#include <string>

#include "cli/progress_bar.h"
#include "cli/translate_alignment.h"
#include "cli/translate_pieces.h"
#include "cli/translate_work.h"

namespace edgemt::cli {

class AttentionPictures {
 public:
  // directory: "" for no SVG files; show: print heat maps. Borrows
  // `pieces`, which must outlive this.
  AttentionPictures(std::string directory, bool show, const PieceSpeller& pieces,
                    const SpecialSourceIds& special);

  // Creates the directory (and its parents) when missing and checks that
  // files can be made in it; false with *error otherwise.
  bool prepare_directory(std::string* error) const;

  // The pictures of a translated line (nothing for a blank or failed one).
  // Messages and heat maps go to stderr through `progress`. False when a
  // file could not be written (reported; later files are not tried).
  bool draw(const LineWork& line, ProgressBar* progress);

 private:
  std::string directory_;
  bool show_;
  const PieceSpeller& pieces_;
  SpecialSourceIds special_;
  bool files_failed_ = false;
};

}  // namespace edgemt::cli
