#include "cli/translate_alignment.h"

namespace edgemt::cli {
namespace {

TranslationIds translation_ids(const SentenceWork& sentence, const SpecialSourceIds& special) {
  TranslationIds ids;
  ids.source = sentence.source.data();
  ids.source_count = sentence.source.size();
  ids.has_target_prefix = special.has_target_prefix;
  ids.source_eos = special.eos;
  ids.tokens = sentence.tokens.data();
  ids.token_count = sentence.tokens.size();
  return ids;
}

}  // namespace

SentenceAttention sentence_attention(const LineWork& line, size_t k, const PieceSpeller& pieces,
                                     const SpecialSourceIds& special,
                                     std::vector<bool>* source_special,
                                     std::vector<bool>* target_special) {
  const SentenceWork& sentence = line.sentences[k];
  const TranslationIds ids = translation_ids(sentence, special);
  SentenceAttention attention;
  translation_pieces(pieces.tokenizer(), ids, sentence.attention_rows, &attention.source_pieces,
                     &attention.target_pieces, source_special, target_special);
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
  std::vector<AlignedSentence> sentences;
  for (size_t k = 0; k < line.sentences.size(); ++k) {
    const SentenceWork& sentence = line.sentences[k];
    const TranslationIds ids = translation_ids(sentence, special);
    const AttentionMatrix attention{sentence.attention.empty() ? nullptr : sentence.attention.data(),
                                    sentence.attention_rows, sentence.source.size()};
    alignment.sentences[k] = align_translation(pieces.tokenizer(), ids, attention);
    sentences.push_back({sentence.begin, sentence.end, sentence.translation, &alignment.sentences[k]});
  }
  alignment.line = line.split ? line_alignment(line.text, line.translation, sentences)
                              : alignment.sentences.empty() ? std::vector<WordPair>()
                                                            : alignment.sentences[0];
  return alignment;
}

}  // namespace edgemt::cli
