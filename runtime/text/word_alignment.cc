#include "edgemt/alignment.h"

#include <algorithm>
#include <string_view>

namespace edgemt {
namespace {

constexpr std::string_view kWordStart = "\xe2\x96\x81";  // U+2581, SentencePiece's space
constexpr std::string_view kUnknown = "<unk>";

bool special_by_name(std::string_view piece) {
  if (piece == "</s>" || piece == "<s>" || piece == "<pad>" || piece == "<blank>") return true;
  // Target-language tokens of multi-target models: ">>fra<<", ">>zh_Hant<<".
  return piece.size() > 4 && piece.substr(0, 2) == ">>" && piece.substr(piece.size() - 2) == "<<";
}

// Reads text one piece at a time and numbers its whitespace words the way
// text.split() would, without building the text: only whether the text so
// far ends inside a word matters.
class WordCounter {
 public:
  // Feeds one piece's text; returns false when it wrote no word character.
  // *first and *last: the words it wrote characters of.
  bool feed(std::string_view piece, bool unknown, TextSide side, size_t* first, size_t* last) {
    bool wrote = false;
    auto character = [&] {
      if (!in_word_) {
        ++words_;
        in_word_ = true;
      }
      if (!wrote) *first = words_ - 1;
      *last = words_ - 1;
      wrote = true;
    };
    if (unknown) {
      // SentencePiece decodes <unk> as " ⁇ "; in the input it is characters
      // of the word it sits in.
      if (side == TextSide::kTarget) in_word_ = false;
      character();
      if (side == TextSide::kTarget) in_word_ = false;
      return wrote;
    }
    for (size_t at = 0; at < piece.size();) {
      if (piece.substr(at, kWordStart.size()) == kWordStart) {
        in_word_ = false;
        at += kWordStart.size();
      } else {
        character();
        ++at;  // a byte of UTF-8 is enough: only "▁" is a space
      }
    }
    return wrote;
  }

 private:
  size_t words_ = 0;
  bool in_word_ = false;
};

// The largest word index plus one: the number of words.
size_t word_count(const std::vector<size_t>& words) {
  size_t count = 0;
  for (size_t word : words) {
    if (word != kNoWord) count = std::max(count, word + 1);
  }
  return count;
}

// The pieces (rows or columns) of each word 0 .. count-1. A word without a
// piece of its own lies inside a piece spanning several words, which carries
// the index of its last word: the first piece after the word.
std::vector<std::vector<size_t>> pieces_of_words(const std::vector<size_t>& words, size_t count) {
  std::vector<std::vector<size_t>> pieces(count);
  for (size_t piece = 0; piece < words.size(); ++piece) {
    if (words[piece] != kNoWord) pieces[words[piece]].push_back(piece);
  }
  for (size_t word = 0; word < count; ++word) {
    if (!pieces[word].empty()) continue;
    for (size_t piece = 0; piece < words.size(); ++piece) {
      if (words[piece] != kNoWord && words[piece] > word) {
        pieces[word].push_back(piece);
        break;
      }
    }
  }
  return pieces;
}

}  // namespace

std::vector<size_t> piece_words(const std::vector<std::string>& pieces,
                                const std::vector<bool>& is_special, TextSide side) {
  std::vector<size_t> words(pieces.size(), kNoWord);
  WordCounter counter;
  std::vector<size_t> waiting;  // pieces that are only "▁": they join the next word written
  for (size_t i = 0; i < pieces.size(); ++i) {
    const bool special = (i < is_special.size() && is_special[i]) || special_by_name(pieces[i]);
    if (special) continue;
    size_t first = kNoWord;
    size_t last = kNoWord;
    if (!counter.feed(pieces[i], pieces[i] == kUnknown, side, &first, &last)) {
      waiting.push_back(i);
      continue;
    }
    for (size_t space : waiting) words[space] = first;
    waiting.clear();
    words[i] = last;
  }
  return words;  // pieces still waiting (trailing spaces) stay kNoWord
}

std::vector<WordPair> align_words(const AttentionMatrix& attention,
                                  const std::vector<size_t>& source_words,
                                  const std::vector<size_t>& target_words) {
  const size_t rows = attention.rows;
  const size_t columns = attention.columns;
  if (attention.weights == nullptr || source_words.size() != columns ||
      target_words.size() != rows) {
    return {};
  }
  const size_t source_count = word_count(source_words);
  const size_t target_count = word_count(target_words);
  if (source_count == 0) return {};
  const std::vector<std::vector<size_t>> source_columns =
      pieces_of_words(source_words, source_count);
  const std::vector<std::vector<size_t>> target_rows = pieces_of_words(target_words, target_count);

  std::vector<WordPair> pairs;
  pairs.reserve(target_count);
  std::vector<double> column_mass(columns);  // [columns]: the target word's rows summed
  for (size_t target = 0; target < target_count; ++target) {
    std::fill(column_mass.begin(), column_mass.end(), 0.0);
    for (size_t row : target_rows[target]) {
      const float* weights = attention.weights + row * columns;
      for (size_t column = 0; column < columns; ++column) {
        column_mass[column] += static_cast<double>(weights[column]);
      }
    }
    size_t best = 0;
    double best_mass = 0.0;
    for (size_t source = 0; source < source_count; ++source) {
      double mass = 0.0;
      for (size_t column : source_columns[source]) mass += column_mass[column];
      // Strictly greater: the lowest index keeps a tie.
      if (source == 0 || mass > best_mass) {
        best = source;
        best_mass = mass;
      }
    }
    pairs.push_back({best, target});
  }
  return pairs;
}

std::string format_alignment(const std::vector<WordPair>& pairs) {
  std::string text;
  for (const WordPair& pair : pairs) {
    if (!text.empty()) text += ' ';
    text += std::to_string(pair.source_word) + '-' + std::to_string(pair.target_word);
  }
  return text;
}

}  // namespace edgemt
