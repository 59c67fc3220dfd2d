#include "cli/translate_pieces.h"

namespace edgemt::cli {

std::string PieceSpeller::piece(TextSide side, int32_t id) const {
  std::string text;
  if (tokenizer_.piece(side, id, &text).is_ok()) return text;
  return "<id " + std::to_string(id) + ">";
}

}  // namespace edgemt::cli
