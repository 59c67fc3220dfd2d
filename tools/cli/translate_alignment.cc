#include "cli/translate_alignment.h"

#include <algorithm>

#include "cli/translate_word_positions.h"

namespace edgemt::cli {

SentenceAttention sentence_attention(const LineWork& line, size_t k, const PieceSpeller& pieces,
                                     const SpecialSourceIds& special,
                                     std::vector<bool>* source_special,
                                     std::vector<bool>* target_special) {
  const SentenceWork& sentence = line.sentences[k];
  SentenceAttention attention;
  source_special->assign(sentence.source.size(), false);
  for (size_t i = 0; i < sentence.source.size(); ++i) {
    attention.source_pieces.push_back(pieces.piece(TextSide::kSource, sentence.source[i]));
    (*source_special)[i] = (i == 0 && special.has_target_prefix) ||
                           (i + 1 == sentence.source.size() && sentence.source[i] == special.eos);
  }
  target_special->assign(sentence.attention_rows, false);
  for (size_t t = 0; t < sentence.attention_rows; ++t) {
    // Rows past the generated tokens: the step that chose EOS.
    const bool eos_row = t >= sentence.tokens.size();
    attention.target_pieces.push_back(eos_row ? "</s>" : pieces.piece(TextSide::kTarget, sentence.tokens[t]));
    (*target_special)[t] = eos_row;
  }
  attention.weights = sentence.attention.empty() ? nullptr : sentence.attention.data();
  attention.source_text = line.text.substr(sentence.begin, sentence.end - sentence.begin);
  attention.translation = sentence.translation;
  return attention;
}

LineAlignment align_line(const LineWork& line, const PieceSpeller& pieces,
                         const SpecialSourceIds& special) {
  LineAlignment alignment;
  if (line.failed()) return alignment;
  alignment.sentences.resize(line.sentences.size());
  size_t search_from = 0;  // in line.translation: where the next sentence's translation may start
  for (size_t k = 0; k < line.sentences.size(); ++k) {
    const SentenceWork& sentence = line.sentences[k];
    std::vector<bool> source_special;
    std::vector<bool> target_special;
    const SentenceAttention attention =
        sentence_attention(line, k, pieces, special, &source_special, &target_special);
    const std::vector<WordPair> pairs = align_words(
        attention, piece_words(attention.source_pieces, source_special, TextSide::kSource),
        piece_words(attention.target_pieces, target_special, TextSide::kTarget));
    alignment.sentences[k] = pairs;
    if (!line.split) {
      alignment.line = pairs;
      continue;
    }
    const std::vector<size_t> source_words = words_in_whole(
        line.text, std::string_view(line.text).substr(sentence.begin, sentence.end - sentence.begin),
        sentence.begin);
    size_t at = line.translation.find(sentence.translation, search_from);
    if (at == std::string::npos) at = std::min(search_from, line.translation.size());
    const std::vector<size_t> target_words = words_in_whole(line.translation, sentence.translation, at);
    search_from = at + sentence.translation.size();
    for (const WordPair& pair : pairs) {
      if (pair.source_word < source_words.size() && pair.target_word < target_words.size()) {
        alignment.line.push_back({source_words[pair.source_word], target_words[pair.target_word]});
      }
    }
  }
  // Sentences joined without a space (after CJK 。) share a word: one link.
  auto order = [](const WordPair& a, const WordPair& b) {
    return a.target_word != b.target_word ? a.target_word < b.target_word : a.source_word < b.source_word;
  };
  auto same = [](const WordPair& a, const WordPair& b) {
    return a.target_word == b.target_word && a.source_word == b.source_word;
  };
  std::stable_sort(alignment.line.begin(), alignment.line.end(), order);
  alignment.line.erase(std::unique(alignment.line.begin(), alignment.line.end(), same), alignment.line.end());
  return alignment;
}

}  // namespace edgemt::cli
