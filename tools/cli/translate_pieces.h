// PieceSpeller: a model id -> its piece ("▁Hund", "</s>", ">>fra<<"), for
// --json's tokens and the attention views' labels, through the command's
// Tokenizer (Tokenizer::piece: the model's piece vocabulary, or its
// SentencePiece model when the ids are SentencePiece's own).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "edgemt/model.h"
#include "edgemt/status.h"
#include "edgemt/tokenizer.h"

namespace edgemt::cli {

class PieceSpeller {
 public:
  // Borrows the tokenizer, which must outlive this.
  explicit PieceSpeller(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

  // The piece of `id` on `side`; "<id N>" for an id that has none.
  std::string piece(TextSide side, int32_t id) const;

  const Tokenizer& tokenizer() const { return tokenizer_; }

 private:
  const Tokenizer& tokenizer_;
};

}  // namespace edgemt::cli
