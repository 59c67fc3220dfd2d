// cli::piece_words, align_words and format_alignment against hand-counted
// words and hand-summed attention. Built into edgemt_cli_tests with
// tools/cli/word_alignment.cc (tests/CMakeLists.txt).
//
// The word rule is also checked against a naive reading of the pieces: glue
// them into text the way SentencePiece decodes them ("▁" is a space, an
// unknown piece " ⁇ " when decoded, special pieces nothing) and split the
// text on whitespace; piece_words must count as many words.
#include "edgemt/alignment.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

namespace edgemt {
namespace {

using Pieces = std::vector<std::string>;
using Words = std::vector<size_t>;

// One sentence's pieces and weights [target pieces, source pieces], as these
// cases write them, aligned through the library's AttentionMatrix.
struct SentenceAttention {
  Pieces source_pieces;
  Pieces target_pieces;
  const float* weights = nullptr;
};

std::vector<WordPair> align_words(const SentenceAttention& s, const Words& source_words,
                                  const Words& target_words) {
  const AttentionMatrix attention{s.weights, s.target_pieces.size(), s.source_pieces.size()};
  return edgemt::align_words(attention, source_words, target_words);
}
constexpr size_t X = kNoWord;

// The words of the pieces' text as `text.split()` finds them: the naive
// expectation piece_words must agree with.
size_t whitespace_words(const Pieces& pieces, TextSide side) {
  std::string text;
  for (const std::string& piece : pieces) {
    if (piece == "</s>" || piece == "<s>" || piece == "<pad>" ||
        (piece.size() > 4 && piece.rfind(">>", 0) == 0)) {
      continue;
    }
    if (piece == "<unk>") {
      text += side == TextSide::kTarget ? " ?? " : "??";
      continue;
    }
    for (size_t at = 0; at < piece.size();) {
      if (piece.compare(at, 3, "\xe2\x96\x81") == 0) {
        text += ' ';
        at += 3;
      } else {
        text += piece[at++];
      }
    }
  }
  std::istringstream stream(text);
  size_t count = 0;
  for (std::string word; stream >> word;) ++count;
  return count;
}

size_t counted_words(const Words& words) {
  size_t count = 0;
  for (size_t word : words) {
    if (word != kNoWord && word + 1 > count) count = word + 1;
  }
  return count;
}

TEST_CASE("text/word_alignment: piece_words numbers the whitespace words of the text") {
  struct Case {
    const char* what;
    Pieces pieces;
    TextSide side;
    Words expected;
  };
  const std::vector<Case> cases = {
      {"one piece a word", {"▁A", "▁man", "▁is", "</s>"}, TextSide::kTarget, {0, 1, 2, X}},
      {"a word in several pieces", {"▁Fahr", "rad", "▁und", "▁Zu", "g", "▁"}, TextSide::kTarget,
       {0, 0, 1, 2, 2, X}},
      {"punctuation without ▁ continues the word (\"bike.\")", {"▁a", "▁bike", ".", "</s>"},
       TextSide::kSource, {0, 1, 1, X}},
      {"the first real piece is word 0 without ▁", {"<s>", "Hello", "▁world"}, TextSide::kTarget,
       {X, 0, 1}},
      {"a lone ▁ begins the word the next piece continues", {"▁Ein", "▁", ",", "▁gut"},
       TextSide::kTarget, {0, 1, 1, 2}},
      {"a lone ▁ before a ▁ piece is one word with it", {"▁Ein", "▁", "▁Mann"}, TextSide::kTarget,
       {0, 1, 1}},
      {"a leading lone ▁", {"▁", "(", "ja", ")"}, TextSide::kSource, {0, 0, 0, 0}},
      {"a trailing lone ▁ is no word", {"▁ja", "▁", "</s>"}, TextSide::kTarget, {0, X, X}},
      {"decoded <unk> is \" ⁇ \": a word, and the next piece starts one",
       {"▁Ein", "<unk>", "er", "▁kam"}, TextSide::kTarget, {0, 1, 2, 3}},
      {"decoded <unk> after a lone ▁", {"▁Ein", "▁", "<unk>", "."}, TextSide::kTarget,
       {0, 1, 1, 2}},
      {"two decoded <unk>", {"<unk>", "<unk>"}, TextSide::kTarget, {0, 1}},
      {"encoded <unk> is characters inside the input's word", {"▁caf", "<unk>", "▁au", "<unk>"},
       TextSide::kSource, {0, 0, 1, 1}},
      {"special pieces by name", {">>fra<<", "▁Un", "<pad>", "▁homme", "<s>", "</s>"},
       TextSide::kSource, {X, 0, X, 1, X, X}},
      {"a multi-word piece gets its last word", {"▁in", "▁New▁York", "▁now"}, TextSide::kTarget,
       {0, 2, 3}},
      {"a lone ▁ joins the first word of a multi-word piece", {"▁in", "▁", "New▁York"},
       TextSide::kTarget, {0, 1, 2}},
      {"only special pieces", {"</s>"}, TextSide::kTarget, {X}},
      {"nothing", {}, TextSide::kTarget, {}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const Words words = piece_words(c.pieces, {}, c.side);
    CHECK(words == c.expected);
    CHECK(counted_words(words) == whitespace_words(c.pieces, c.side));
  }
}

TEST_CASE("text/word_alignment: the caller's special pieces are no word") {
  const Pieces pieces = {"<2de>", "▁Ein", "▁Mann", "<sep>"};
  CHECK(piece_words(pieces, {true, false, false, true}) == Words{X, 0, 1, X});
  // Shorter than the pieces: the rest is not special by the caller, and
  // "<sep>" (no "▁") continues the word before it.
  CHECK(piece_words(pieces, {true}) == Words{X, 0, 1, 1});
}

TEST_CASE("text/word_alignment: unk depends on the side; nothing else does") {
  const Pieces plain = {"▁Zwei", "▁Hund", "e", "▁", ".", "</s>"};
  CHECK(piece_words(plain, {}, TextSide::kSource) == piece_words(plain, {}, TextSide::kTarget));
  const Pieces unknown = {"▁na", "<unk>", "ve"};
  CHECK(piece_words(unknown, {}, TextSide::kSource) == Words{0, 0, 0});
  CHECK(piece_words(unknown, {}, TextSide::kTarget) == Words{0, 1, 2});
  CHECK(piece_words(unknown, {}) == Words{0, 1, 2});  // the default: decoded text
}

// A 3 x 4 matrix, by hand. Target pieces "▁Ein" "▁Mann" "</s>", source
// pieces "▁A" "▁m" "an" "</s>": source words A (column 0), man (columns 1-2).
TEST_CASE("text/word_alignment: align_words takes the word of most attention mass") {
  const float weights[3 * 4] = {
      0.6f, 0.3f, 0.0f, 0.1f,  // Ein:  A 0.6, man 0.3 + 0.0 = 0.3  -> A
      0.4f, 0.3f, 0.3f, 0.0f,  // Mann: A 0.4, man 0.3 + 0.3 = 0.6  -> man (no piece beats A alone)
      0.0f, 0.0f, 0.0f, 1.0f,  // </s>: special row, left out
  };
  SentenceAttention sentence;
  sentence.source_pieces = {"▁A", "▁m", "an", "</s>"};
  sentence.target_pieces = {"▁Ein", "▁Mann", "</s>"};
  sentence.weights = weights;
  const Words source_words = piece_words(sentence.source_pieces, {}, TextSide::kSource);
  const Words target_words = piece_words(sentence.target_pieces, {});
  REQUIRE(source_words == Words{0, 1, 1, X});
  REQUIRE(target_words == Words{0, 1, X});
  const std::vector<WordPair> pairs = align_words(sentence, source_words, target_words);
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].source_word == 0);
  CHECK(pairs[0].target_word == 0);
  CHECK(pairs[1].source_word == 1);
  CHECK(pairs[1].target_word == 1);
  CHECK(format_alignment(pairs) == "0-0 1-1");
}

TEST_CASE("text/word_alignment: a target word sums the rows of its pieces") {
  // Target "▁Fahr" "rad" is one word: rows summed, A 0.7 + 0.0 = 0.7 against
  // bike 0.3 + 0.9 = 1.2 -> bike, though "▁Fahr" alone looks at A.
  const float weights[2 * 3] = {
      0.7f, 0.3f, 0.0f,
      0.0f, 0.9f, 0.1f,
  };
  SentenceAttention sentence;
  sentence.source_pieces = {"▁A", "▁bike", "</s>"};
  sentence.target_pieces = {"▁Fahr", "rad"};
  sentence.weights = weights;
  const std::vector<WordPair> pairs =
      align_words(sentence, piece_words(sentence.source_pieces, {}, TextSide::kSource),
                  piece_words(sentence.target_pieces, {}));
  CHECK(format_alignment(pairs) == "1-0");
}

TEST_CASE("text/word_alignment: ties go to the lowest source word; EOS mass counts for nothing") {
  const float weights[3 * 4] = {
      0.4f, 0.4f, 0.0f, 0.2f,  // tie between words 0 and 1 -> 0
      0.1f, 0.1f, 0.1f, 0.7f,  // mostly the EOS column (left out); a three-way tie -> 0
      0.0f, 0.2f, 0.5f, 0.3f,  // word 2
  };
  SentenceAttention sentence;
  sentence.source_pieces = {"▁a", "▁b", "▁c", "</s>"};
  sentence.target_pieces = {"▁x", "▁y", "▁z"};
  sentence.weights = weights;
  const std::vector<WordPair> pairs =
      align_words(sentence, piece_words(sentence.source_pieces, {}, TextSide::kSource),
                  piece_words(sentence.target_pieces, {}));
  CHECK(format_alignment(pairs) == "0-0 0-1 2-2");
}

TEST_CASE("text/word_alignment: every target word gets one pair, sorted by target word") {
  // Five target words, each looking mostly at a different source word.
  const size_t rows = 6;  // "▁a" "▁b" "c" "▁d" "▁e" "▁f"  (words 0 1 1 2 3 4)
  const size_t columns = 5;  // "▁p" "▁q" "▁r" "▁s" "</s>"
  const float weights[rows * columns] = {
      0.0f, 0.0f, 0.9f, 0.0f, 0.1f,  //
      0.0f, 0.2f, 0.0f, 0.8f, 0.0f,  //
      0.0f, 0.0f, 0.0f, 1.0f, 0.0f,  //
      1.0f, 0.0f, 0.0f, 0.0f, 0.0f,  //
      0.0f, 0.6f, 0.4f, 0.0f, 0.0f,  //
      0.3f, 0.0f, 0.0f, 0.0f, 0.7f,  //
  };
  SentenceAttention sentence;
  sentence.source_pieces = {"▁p", "▁q", "▁r", "▁s", "</s>"};
  sentence.target_pieces = {"▁a", "▁b", "c", "▁d", "▁e", "▁f"};
  sentence.weights = weights;
  const Words target_words = piece_words(sentence.target_pieces, {});
  const std::vector<WordPair> pairs =
      align_words(sentence, piece_words(sentence.source_pieces, {}, TextSide::kSource),
                  target_words);
  REQUIRE(pairs.size() == counted_words(target_words));
  for (size_t j = 0; j < pairs.size(); ++j) CHECK(pairs[j].target_word == j);
  CHECK(format_alignment(pairs) == "2-0 3-1 0-2 1-3 0-4");
}

TEST_CASE("text/word_alignment: words inside a multi-word piece use the piece") {
  // "▁in" "▁New▁York" on both sides: words in(0) New(1) York(2); the piece
  // carries word 2 and lends its row and column to word 1.
  const float weights[2 * 2] = {
      0.9f, 0.1f,
      0.2f, 0.8f,
  };
  SentenceAttention sentence;
  sentence.source_pieces = {"▁in", "▁New▁York"};
  sentence.target_pieces = {"▁in", "▁New▁York"};
  sentence.weights = weights;
  const Words words = piece_words(sentence.source_pieces, {});
  REQUIRE(words == Words{0, 2});
  // Target New: row 1 -> New 0.8 ties York 0.8 -> the lower, New. York likewise -> New.
  CHECK(format_alignment(align_words(sentence, words, words)) == "0-0 1-1 1-2");
}

TEST_CASE("text/word_alignment: nothing to align gives no pairs") {
  const float weights[2] = {0.5f, 0.5f};
  SentenceAttention sentence;
  sentence.source_pieces = {"</s>", "<pad>"};
  sentence.target_pieces = {"▁x"};
  sentence.weights = weights;
  CHECK(align_words(sentence, piece_words(sentence.source_pieces, {}), {0}).empty());

  sentence.source_pieces = {"▁a", "</s>"};
  CHECK(align_words(sentence, {0, X}, {0}).size() == 1);
  CHECK(align_words(sentence, {0}, {0}).empty());        // a word list too short: caller bug
  CHECK(align_words(sentence, {0, X}, {0, 1}).empty());
  sentence.weights = nullptr;
  CHECK(align_words(sentence, {0, X}, {0}).empty());
}

TEST_CASE("text/word_alignment: format_alignment writes source-target pairs as given") {
  CHECK(format_alignment({}).empty());
  CHECK(format_alignment({{0, 0}}) == "0-0");
  CHECK(format_alignment({{0, 0}, {2, 1}, {1, 2}}) == "0-0 2-1 1-2");
  CHECK(format_alignment({{12, 3}, {101, 4}}) == "12-3 101-4");
}

}  // namespace
}  // namespace edgemt
