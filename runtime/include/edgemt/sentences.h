// Sentence splitting (the edgemt_text library): what `edgemt translate`,
// edgemt_translate_document() and the Python module's translate() do to a
// line before translating it.
//
// Models such as the bundled Multi30k one are trained on single sentences; a
// paragraph on one line comes back truncated or garbled. A line is split
// into sentences, they are translated as one batch, and the translations are
// joined back into one line.
//
// The rules are deliberately conservative: a wrong split (mid-sentence)
// ruins a translation, a missed one only leaves the line as it was. A line
// splits only at whitespace that follows
//
//   a terminator   . ! ? … ... and runs such as ?! or !!
//   + optional closing quotes/brackets   " ' ” ’ “ ‘ » « › ) ] }
//
// and precedes a sentence start: an uppercase letter (ASCII, Latin-1, Latin
// Extended-A, Greek, Cyrillic) or a digit, possibly after opening quotes or
// brackets (" ' “ „ ‘ « » ( [ ¿ ¡ ...). French spacing counts as the same
// thing: in `Vraiment ? Oui.` the lone `?` ends the first sentence, and in
// `« Bonjour ! » Il part.` the lone `»` still belongs to it. A gap made only
// of no-break spaces (U+00A0, U+202F, U+2007, U+2009) never splits.
// CJK 。！？ end a sentence even without whitespace and whatever follows.
//
// Nothing splits inside quotes or brackets: `He said "Stop. Go away." Then
// he left.` is two sentences, the first with the whole quote, and a sign's
// text (`a sign saying "Pop! Tech" on stage`) stays whole. A quote mark at
// the start of a word opens, anywhere else it closes (`„Open“-Schild`), so
// every language's quotes pair up; an unclosed one stops splitting for the
// rest of the line. (Apostrophe-like ' ‘ ’ ‚ are not counted.)
//
// A `.` does not end a sentence after
//   - an abbreviation of the language's list (`Mr.` `Inc.` `vs.` `bzw.` `ca.`
//     `Hr.` `Mme.` `env.` `av.` ...), a single letter (initials
//     `J. R. R. Tolkien`, `George W. Bush`, `z. B.`, `M. Dupont`) or short
//     letter groups joined by dots (`e.g.` `U.S.` `a.m.` `z.B.` `d.h.`
//     `c.-à-d.` `J.-C.` `Ph.D.`);
//   - an abbreviation that stands before numbers (`No. 5`, `Fig. 3`,
//     `Jan. 5`, `Nr. 7`) when a digit follows (`No. We stay.` does split);
//   - a number that starts its sentence (list items: `1. Introduction`,
//     `II. Methods`);
//   - in German (and for unknown languages), a number of 1 to 3 digits or a
//     day.month date, which may be an ordinal: `am 3. Mai`, `der 2. Platz`,
//     `am 24.11. Abends`; unless an article, pronoun, preposition or the like
//     follows, which cannot follow an ordinal (`mit der Nummer 28. Ein Mann
//     ...` splits). A year (`im Jahr 2010. Danach`) ends a sentence; so does
//     any number in English and French (`He counted to 10. Then ...`).
// `etc.`, `usw.` and `usf.` are not abbreviations here: they end an
// enumeration, which nearly always ends its sentence, so followed by a
// sentence start they end the sentence (`apples, pears, etc. Then we left.`);
// followed by lowercase they do not (`apples, pears, etc. are fruit`).
// An ellipsis in brackets (`[...]`, `(…)`) marks an omission, not an end.
// Dots inside a word never split: 3.5, 1,000.50, 10.30, 24.11.2026, 2.0.1,
// www.example.com, info@example.de, Node.js.
//
// `language` is an ISO 639-1 code: "en", "de" and "fr" use their own lists;
// anything else ("", "es", "de-AT") uses all of them and the German number
// rule, which only ever splits less.
//
// Bytes are never assumed to be valid UTF-8: a malformed sequence is an
// ordinary non-letter character. Time and memory are linear in the length of
// the line. Both functions are pure and safe to call from several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace edgemt {

// One sentence of a line: bytes [begin, end) of it, without the whitespace around it.
struct SentenceSpan {
  size_t begin = 0;
  size_t end = 0;
};

// Splits one line (UTF-8, no '\n') into sentences, in order. `language` is an
// ISO 639-1 code ("en", "de", "fr"; anything else, including "", uses the
// union of the known rules). A line of one sentence gives one span, a blank
// line none. Spans are non-empty, in order, and do not overlap; what lies
// between two of them is whitespace only (possibly none, after CJK 。！？).
std::vector<SentenceSpan> split_sentences(std::string_view line, std::string_view language);

// The sentences a line is translated as: split_sentences(line, language)
// when `split` is on and it finds two or more, else one span, the whole
// line (spaces around it included, which SentencePiece may keep), so that
// a line of one sentence translates exactly as without splitting.
std::vector<SentenceSpan> sentence_spans(std::string_view line, bool split,
                                         std::string_view language);

// True for the languages with rules of their own ("en", "de", "fr"); every
// other value gets the generic rules (the union of theirs).
bool has_own_splitting_rules(std::string_view language);

// The translations of a line's sentences joined back into one line: sentence
// k's translation replaces span k, and the text between spans (the input's
// own whitespace) is kept, so "A. \tB." with translations X, Y gives
// "X \tY". Text before the first / after the last span is dropped.
//
// `translations` should have one entry per span. If it has fewer, the result
// ends after the last one; extra ones are appended, each after one space, so
// that no translated text is lost. Spans that do not come from
// split_sentences(line) (out of order or out of the line) are joined with
// one space too.
std::string join_sentences(std::string_view line, const std::vector<SentenceSpan>& spans,
                           const std::vector<std::string>& translations);

// ---- Sentences longer than the model takes --------------------------------
//
// A sentence over the model's position table cannot be translated whole.
// Rather than failing the line, it is translated piece by piece and the
// pieces' translations joined with the text between them (the whitespace
// the cut fell on), as sentences are. A cut falls, in order of preference,
// on whitespace after , ; : or a dash (- – —), on any other whitespace, and
// only when one word alone is too long, between two UTF-8 characters. Each
// piece is as long as fits, except that a cut after punctuation is taken
// when it keeps at least half of what the furthest whitespace cut would.

// How many source tokens `text` encodes to (a target prefix included).
using TokenCounter = std::function<size_t(std::string_view text)>;

// The pieces of line[span.begin, span.end) (valid UTF-8), each with at most
// `max_tokens` tokens by `count`, in order, without the whitespace between
// them; the span itself when it fits. A piece of one UTF-8 character that
// does not fit is returned as it is (the caller reports it).
std::vector<SentenceSpan> cut_long_sentence(std::string_view line, SentenceSpan span,
                                            size_t max_tokens, const TokenCounter& count);

// Encodes a source as the translator reads it (pieces and EOS, a target
// prefix put first, ...) into *ids; false when the tokenizer refuses it.
using SourceEncoder = std::function<bool(std::string_view text, std::vector<int32_t>* ids)>;

// One source of a line: its bytes, and its ids when `encoded`.
struct EncodedSpan {
  SentenceSpan span;
  std::vector<int32_t> ids;
  bool encoded = false;  // false: the tokenizer refused it (the caller asks it why)
};

// The sources a line is translated as (`edgemt translate`,
// edgemt_translate_document, Python's translate), each encoded once:
// sentence_spans(line, split, language), and with `split` on, each sentence
// over `max_tokens` ids cut by cut_long_sentence (its pieces encoded after
// the cut). With `split` off the line stays whole, fitting or not.
std::vector<EncodedSpan> source_spans(std::string_view line, bool split,
                                      std::string_view language, size_t max_tokens,
                                      const SourceEncoder& encode);

}  // namespace edgemt
