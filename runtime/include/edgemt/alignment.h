// Word alignments from attention weights (the edgemt_text library), for
// `edgemt translate --align`, edgemt_translate_document() and the Python
// module: each target word is paired with the source word its pieces
// attended to most, written as fast_align and Marian write alignments
// ("0-0 1-2 2-1").
//
// Words are the whitespace-separated words of the text, numbered from 0, as
// `text.split()` numbers them: the source words of the input (after
// SentencePiece's normalization: runs of spaces collapse, leading and
// trailing spaces go) and the target words of the translation as printed.
// piece_words() counts them from the pieces, reading each piece the way the
// text spells it:
//   * "▁" (U+2581) is a space, so a piece starting with it begins a word and
//     a piece without it continues the word before ("▁bike" "." is the one
//     word "bike."). The first word starts at the first real piece, "▁" or
//     not.
//   * A piece that is only "▁" begins the word the next real piece
//     continues ("▁" "," is the word ","); at the end it belongs to no word.
//   * Unknown pieces ("<unk>") depend on the side. Decoded (TextSide::
//     kTarget), SentencePiece writes an unknown piece as " ⁇ ": a word of its
//     own, and the piece after it starts a new word even without "▁".
//     Encoded (TextSide::kSource), an unknown piece stands for characters
//     the vocabulary lacks inside the input's word, so it continues the word
//     like any piece without "▁" ("▁caf" "<unk>" is one word "caf☃").
//   * Special pieces are no word (kNoWord): eos "</s>", bos "<s>", pad
//     "<pad>" and OpenNMT's "<blank>", target-language tokens ">>xx<<", and
//     whatever the caller marks in is_special (say, other control pieces).
//   * A piece with a "▁" inside ("▁New▁York", from SentencePiece models
//     trained with split_by_whitespace=false; edgemt's bundled and fixture
//     models have none) spans several words: it gets the index of the last
//     one, so the count stays that of the text, and align_words() lends it
//     to the words before that it covers (which have no piece of their own).
// Models that write "▁" as a suffix (treat_whitespace_as_suffix) are not
// read correctly; none that edgemt converts do.
//
// Threading: plain functions of their arguments, callable from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "edgemt/model.h"  // TextSide
#include "edgemt/tokenizer.h"

namespace edgemt {

inline constexpr size_t kNoWord = static_cast<size_t>(-1);

// The word index of each piece (rules above). is_special[i] true marks piece
// i special; is_special may be shorter than pieces (missing entries: not
// special), so {} means "only the pieces special by name". `side` says how
// unknown pieces read: kTarget (the default) as decoded text, kSource as the
// encoded input; it changes nothing for sentences without "<unk>".
std::vector<size_t> piece_words(const std::vector<std::string>& pieces,
                                const std::vector<bool>& is_special,
                                TextSide side = TextSide::kTarget);

// One alignment link: source word i, target word j.
struct WordPair {
  size_t source_word;
  size_t target_word;
};

// What the decoder attended to for one translation (Translation::attention):
// [rows, columns] row-major, one row per target piece (the generated
// pieces, then the step that chose EOS), one column per source piece.
// Borrows `weights`.
struct AttentionMatrix {
  const float* weights = nullptr;
  size_t rows = 0;
  size_t columns = 0;
};

// Every target word is paired with the source word of the largest attention
// mass: the sum, over the target word's rows (its pieces), of the weights of
// the source word's columns (its pieces). Ties go to the lowest source index.
// Rows and columns whose word is kNoWord (special pieces) are left out, so
// the EOS row and column count for nothing.
//
// source_words / target_words: piece_words() of the source pieces / target
// pieces (one entry per column / row). The words are 0 .. the
// largest index; a word with no piece of its own (inside a piece that spans
// several words) uses the piece that spans it, the next one.
//
// Returns one pair per target word, sorted by target word (then source
// word): exactly (number of target words) pairs, or none when there is no
// source word to align to, when attention.weights is null, or when the word
// lists do not have one entry per column and per row (a caller bug).
std::vector<WordPair> align_words(const AttentionMatrix& attention,
                                  const std::vector<size_t>& source_words,
                                  const std::vector<size_t>& target_words);

// "0-0 1-2 2-1": "source-target" pairs in the order given, separated by one
// space, no trailing space or newline; "" for no pairs.
std::string format_alignment(const std::vector<WordPair>& pairs);

// The ids of one translation, as the translator took and gave them.
struct TranslationIds {
  const int32_t* source = nullptr;  // [target prefix] pieces [EOS]: the attention's columns
  size_t source_count = 0;
  bool has_target_prefix = false;   // source[0] is a target-language token
  int32_t source_eos = -1;          // the model's source EOS (Model::eos_id(kSource))
  const int32_t* tokens = nullptr;  // generated target ids, without EOS
  size_t token_count = 0;
};

// The pieces of a translation as the attention's columns and rows read
// them: one per source id, one per row (the generated pieces, then "</s>"
// for rows past them: the step that chose EOS); an id the vocabulary does
// not have reads "<id N>". *source_special / *target_special mark those
// that are no word (the prefix, EOS, the EOS row).
void translation_pieces(const Tokenizer& tokenizer, const TranslationIds& ids, size_t rows,
                        std::vector<std::string>* source_pieces,
                        std::vector<std::string>* target_pieces,
                        std::vector<bool>* source_special, std::vector<bool>* target_special);

// align_words() of one translation, over its own words (the source
// sentence's and its translation's whitespace words).
std::vector<WordPair> align_translation(const Tokenizer& tokenizer, const TranslationIds& ids,
                                        const AttentionMatrix& attention);

// For each whitespace word of `part`, which starts at byte `offset` of
// `whole`: the index of the word of `whole` that holds its first character
// (0 when none does: `part` not inside `whole`). Whitespace: ASCII space,
// \t, \n, \v, \f, \r. Example: whole "A b. C d.", part "C d." at 5 -> {2, 3}.
std::vector<size_t> words_in_whole(std::string_view whole, std::string_view part, size_t offset);

// One translated sentence of a split line, for line_alignment().
struct AlignedSentence {
  size_t begin = 0;  // its bytes in the line: [begin, end)
  size_t end = 0;
  std::string_view translation;         // its translation
  const std::vector<WordPair>* pairs;   // align_translation() of it
};

// A split line's alignment over the line's own words: sentence k's source
// word i is the line's whitespace word that holds its first character, its
// target word j the word of `translation` (the sentences' translations
// joined: join_sentences()) that holds j's first character. So the words
// are numbered as line.split() and translation.split() number them, split
// or not. Sorted by target word, then source word; sentences joined without
// a space (after CJK 。) share a word, which gets one link per source word.
std::vector<WordPair> line_alignment(std::string_view line, std::string_view translation,
                                     const std::vector<AlignedSentence>& sentences);

}  // namespace edgemt
