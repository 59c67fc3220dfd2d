// cut_long_sentence and source_spans (edgemt/sentences.h): pieces that fit,
// cut at the safest point, against a naive reference of what "fits" means
// (a token counter that counts words, or bytes).
#include "edgemt/sentences.h"

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

namespace edgemt {
namespace {

size_t count_words(std::string_view text) {
  size_t words = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = c == ' ' || c == '\t';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words + 1;  // and EOS
}

std::vector<std::string> pieces_of(const std::string& text, size_t max_tokens,
                                   const TokenCounter& count = count_words) {
  std::vector<std::string> out;
  for (const SentenceSpan& span :
       cut_long_sentence(text, SentenceSpan{0, text.size()}, max_tokens, count)) {
    out.emplace_back(text.substr(span.begin, span.end - span.begin));
  }
  return out;
}

TEST_CASE("text/long_sentences: a sentence that fits is left whole") {
  CHECK(pieces_of("one two three", 4) == std::vector<std::string>{"one two three"});
}

TEST_CASE("text/long_sentences: the longest pieces that fit, at whitespace") {
  CHECK(pieces_of("one two three four five six seven", 4) ==
        std::vector<std::string>{"one two three", "four five six", "seven"});
}

TEST_CASE("text/long_sentences: a cut after punctuation is preferred when not too short") {
  // "one two, three four five" does not fit 4+1: the comma cut keeps 2 of 3 words.
  CHECK(pieces_of("one two, three four five six", 4) ==
        std::vector<std::string>{"one two,", "three four five", "six"});
  // A comma after the first word of a 6-word piece is under half: not taken.
  CHECK(pieces_of("one, two three four five six seven eight", 7) ==
        std::vector<std::string>{"one, two three four five six", "seven eight"});
  // Dashes between spaces count: - and the en dash.
  CHECK(pieces_of("one two \xE2\x80\x93 three four", 4) ==
        std::vector<std::string>{"one two \xE2\x80\x93", "three four"});
}

TEST_CASE("text/long_sentences: whitespace runs between pieces are not in them") {
  const std::string text = "one  two \t three";
  const auto spans = cut_long_sentence(text, {0, text.size()}, 2, count_words);
  REQUIRE(spans.size() == 3);
  CHECK(text.substr(spans[0].begin, spans[0].end - spans[0].begin) == "one");
  CHECK(spans[1].begin == 5);
  CHECK(text.substr(spans[2].begin) == "three");
}

TEST_CASE("text/long_sentences: a span inside a line keeps the line's offsets") {
  const std::string text = "First. one two three four";
  const auto spans = cut_long_sentence(text, {7, text.size()}, 3, count_words);
  REQUIRE(spans.size() == 2);
  CHECK(spans[0].begin == 7);
  CHECK(text.substr(spans[1].begin) == "three four");
}

TEST_CASE("text/long_sentences: one word too long is cut between UTF-8 characters") {
  const TokenCounter bytes = [](std::string_view text) { return text.size(); };
  // "ä" is 2 bytes: 5 bytes fit 2 characters (4 bytes), never half of one.
  const std::vector<std::string> pieces = pieces_of("\xC3\xA4\xC3\xA4\xC3\xA4\xC3\xA4", 5, bytes);
  CHECK(pieces == std::vector<std::string>{"\xC3\xA4\xC3\xA4", "\xC3\xA4\xC3\xA4"});
  // Every piece fits, and together they are the text (a naive check).
  const std::string word(1000, 'x');
  std::string joined;
  for (const std::string& piece : pieces_of(word, 64, bytes)) {
    CHECK(piece.size() <= 64);
    joined += piece;
  }
  CHECK(joined == word);
}

TEST_CASE("text/long_sentences: every piece fits and nothing is lost (a sweep)") {
  std::string text;
  for (int k = 0; k < 200; ++k) text += (k % 7 == 3 ? "word, " : "w ");
  text.pop_back();
  for (size_t max_tokens = 2; max_tokens < 40; ++max_tokens) {
    std::string joined;
    for (const std::string& piece : pieces_of(text, max_tokens)) {
      CHECK(count_words(piece) <= max_tokens);
      joined += (joined.empty() ? "" : " ") + piece;
    }
    CHECK(joined == text);
  }
}

// An encoder of words: id = the word's length, then EOS (0); "!" is refused.
bool encode_words(std::string_view text, std::vector<int32_t>* ids) {
  if (text.find('!') != std::string_view::npos) return false;
  ids->clear();
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t end = std::min(text.find(' ', begin), text.size());
    if (end > begin) ids->push_back(static_cast<int32_t>(end - begin));
    begin = end + 1;
  }
  ids->push_back(0);
  return true;
}

TEST_CASE("text/long_sentences: source_spans splits sentences, then cuts the long ones") {
  const std::string line = "A dog. One two three four five. A cat.";
  std::vector<std::string> pieces;
  std::vector<std::vector<int32_t>> ids;
  for (const EncodedSpan& source : source_spans(line, true, "en", 4, encode_words)) {
    CHECK(source.encoded);
    pieces.push_back(line.substr(source.span.begin, source.span.end - source.span.begin));
    ids.push_back(source.ids);
  }
  CHECK(pieces == std::vector<std::string>{"A dog.", "One two three", "four five.", "A cat."});
  // Each source's ids are its own text's encoding (the cut pieces' too).
  CHECK(ids == std::vector<std::vector<int32_t>>{{1, 4, 0}, {3, 3, 5, 0}, {4, 5, 0}, {1, 4, 0}});
  // Without splitting the line stays whole, however long.
  const std::vector<EncodedSpan> whole = source_spans(line, false, "en", 4, encode_words);
  REQUIRE(whole.size() == 1);
  CHECK(whole[0].span.end - whole[0].span.begin == line.size());
  CHECK(whole[0].ids.size() == 10);
}

TEST_CASE("text/long_sentences: a sentence the encoder refuses is kept whole, not encoded") {
  const std::string line = "A dog! One two three four five. A cat.";
  const std::vector<EncodedSpan> sources = source_spans(line, true, "en", 2, encode_words);
  REQUIRE(sources.size() >= 2);
  CHECK_FALSE(sources[0].encoded);
  CHECK(line.substr(sources[0].span.begin, sources[0].span.end) == "A dog!");
}

}  // namespace
}  // namespace edgemt
