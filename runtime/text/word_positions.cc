// Word numbers across a split line: which word of the whole line (or of its
// joined translation) a word of one sentence is (edgemt/alignment.h).
#include "edgemt/alignment.h"

#include <algorithm>

namespace edgemt {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Byte offsets at which the whitespace words of `text` start.
std::vector<size_t> word_starts(std::string_view text) {
  std::vector<size_t> starts;
  for (size_t at = 0; at < text.size(); ++at) {
    if (!is_space(text[at]) && (at == 0 || is_space(text[at - 1]))) starts.push_back(at);
  }
  return starts;
}

}  // namespace

std::vector<size_t> words_in_whole(std::string_view whole, std::string_view part, size_t offset) {
  const std::vector<size_t> whole_starts = word_starts(whole);
  std::vector<size_t> words;
  for (const size_t start : word_starts(part)) {
    const auto after = std::upper_bound(whole_starts.begin(), whole_starts.end(), offset + start);
    const auto count = static_cast<size_t>(after - whole_starts.begin());
    words.push_back(count == 0 ? 0 : count - 1);
  }
  return words;
}

std::vector<WordPair> line_alignment(std::string_view line, std::string_view translation,
                                     const std::vector<AlignedSentence>& sentences) {
  std::vector<WordPair> out;
  size_t search_from = 0;  // in `translation`: where the next sentence's translation may start
  for (const AlignedSentence& sentence : sentences) {
    const std::vector<size_t> source_words =
        words_in_whole(line, line.substr(sentence.begin, sentence.end - sentence.begin), sentence.begin);
    size_t at = translation.find(sentence.translation, search_from);
    if (at == std::string_view::npos) at = std::min(search_from, translation.size());
    const std::vector<size_t> target_words = words_in_whole(translation, sentence.translation, at);
    search_from = at + sentence.translation.size();
    for (const WordPair& pair : *sentence.pairs) {
      if (pair.source_word < source_words.size() && pair.target_word < target_words.size()) {
        out.push_back({source_words[pair.source_word], target_words[pair.target_word]});
      }
    }
  }
  auto order = [](const WordPair& a, const WordPair& b) {
    return a.target_word != b.target_word ? a.target_word < b.target_word : a.source_word < b.source_word;
  };
  auto same = [](const WordPair& a, const WordPair& b) {
    return a.target_word == b.target_word && a.source_word == b.source_word;
  };
  std::stable_sort(out.begin(), out.end(), order);
  out.erase(std::unique(out.begin(), out.end(), same), out.end());
  return out;
}

}  // namespace edgemt
