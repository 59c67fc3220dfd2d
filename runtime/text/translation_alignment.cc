// align_translation(): a translation's ids read as pieces, then
// align_words() (edgemt/alignment.h).
#include <string>
#include <vector>

#include "edgemt/alignment.h"

namespace edgemt {
namespace {

// The piece of `id` on `side`; "<id N>" for an id that has none.
std::string spell(const Tokenizer& tokenizer, TextSide side, int32_t id) {
  std::string text;
  if (tokenizer.piece(side, id, &text).is_ok()) return text;
  return "<id " + std::to_string(id) + ">";
}

}  // namespace

void translation_pieces(const Tokenizer& tokenizer, const TranslationIds& ids, size_t rows,
                        std::vector<std::string>* source_pieces,
                        std::vector<std::string>* target_pieces,
                        std::vector<bool>* source_special, std::vector<bool>* target_special) {
  source_pieces->clear();
  source_special->assign(ids.source_count, false);
  for (size_t i = 0; i < ids.source_count; ++i) {
    source_pieces->push_back(spell(tokenizer, TextSide::kSource, ids.source[i]));
    (*source_special)[i] = (i == 0 && ids.has_target_prefix) ||
                           (i + 1 == ids.source_count && ids.source[i] == ids.source_eos);
  }
  target_pieces->clear();
  target_special->assign(rows, false);
  for (size_t t = 0; t < rows; ++t) {
    const bool eos_row = t >= ids.token_count;  // the step that chose EOS
    target_pieces->push_back(eos_row ? "</s>" : spell(tokenizer, TextSide::kTarget, ids.tokens[t]));
    (*target_special)[t] = eos_row;
  }
}

std::vector<WordPair> align_translation(const Tokenizer& tokenizer, const TranslationIds& ids,
                                        const AttentionMatrix& attention) {
  std::vector<std::string> source_pieces;
  std::vector<std::string> target_pieces;
  std::vector<bool> source_special;
  std::vector<bool> target_special;
  translation_pieces(tokenizer, ids, attention.rows, &source_pieces, &target_pieces,
                     &source_special, &target_special);
  return align_words(attention, piece_words(source_pieces, source_special, TextSide::kSource),
                     piece_words(target_pieces, target_special, TextSide::kTarget));
}

}  // namespace edgemt
