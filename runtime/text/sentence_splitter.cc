// The rules are described in edgemt/sentences.h. The line is read once as
// whitespace-separated tokens, each classified once as it is read (how it
// ends, whether it is only quotes/brackets) and walked once for the quotes
// and brackets it opens and closes. Each gap is decided from the token
// before it (or the one before that, for a lone `»`) and the start of the
// one or two after it. Nothing scans back to the start of the sentence or
// the line, so the time is linear: a 1 MB line of "A. A. A. ..." costs per
// byte what a short line costs.
//
// Marks are compared as UTF-8 byte strings, and code points are only decoded
// where a letter's case matters (two-byte sequences hold every cased letter
// the rules know), so malformed input simply matches nothing.
#include "edgemt/sentences.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace edgemt {
namespace {

using std::string_view;

// --- Marks ------------------------------------------------------------------

// May close a sentence after its terminator: `"Stop."`, `(Done.)`, `„So.“`,
// `« Oui ! »`. » and « are both: French opens with «, German with ».
constexpr string_view kClosers[] = {"\"", "'", ")", "]", "}", "”",  "’",  "“",
                                    "‘",  "»", "«", "›", "‹", "」", "』", "）"};
// May open a sentence before its first letter: `"Why?"`, `¿Qué?`, `„Halt!“`.
constexpr string_view kOpeners[] = {"\"", "'", "(", "[", "{", "“", "‘",  "„",  "‚",
                                    "«",  "»", "‹", "›", "¿", "¡", "「", "『", "（"};
// A token made only of marks that starts with one of these opens the next
// sentence (French `Il part. « Attends ! »`); any other marks-only token
// closes the previous one (`« Bonjour ! » Il part.`).
constexpr string_view kOpenOnly[] = {"(", "[", "{", "„", "‚", "«", "‹", "¿", "¡", "「", "『", "（"};

// Quotes and brackets that come in pairs, for the nesting depth: not
// ' ’ ‘ ‚ (also apostrophes: `dogs'`, `'Twas`) and not ¿ ¡.
constexpr string_view kPairedMarks[] = {"\"", "“", "”", "„", "«",  "»",  "‹",  "›",  "(",  ")",
                                        "[",  "]", "{", "}", "「", "」", "『", "』", "（", "）"};

constexpr string_view kOpeningBrackets[] = {"(", "[", "{", "「", "『", "（"};

// Western terminators need whitespace and a sentence start after them.
constexpr string_view kTerminators[] = {".", "!", "?", "…", "‽"};
// CJK ones end a sentence by themselves: CJK has no spaces and no case.
constexpr string_view kCjkTerminators[] = {"。", "！", "？"};

// Letters and digits begin no mark (nor space): the per-byte scans skip
// them without looking at any list, which keeps a scan of plain text cheap.
bool is_ascii_alphanumeric(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// The length of the mark of `marks` that starts at text[pos], 0 if none.
template <size_t N>
size_t mark_at(string_view text, size_t pos, const string_view (&marks)[N]) {
  if (pos >= text.size() || is_ascii_alphanumeric(text[pos])) return 0;
  const size_t left = text.size() - pos;
  for (string_view mark : marks) {
    if (mark.front() != text[pos] || mark.size() > left) continue;
    size_t k = 1;
    while (k < mark.size() && mark[k] == text[pos + k]) ++k;
    if (k == mark.size()) return k;
  }
  return 0;
}

// The length of the mark of `marks` that ends at text[end), 0 if none.
template <size_t N>
size_t mark_before(string_view text, size_t end, const string_view (&marks)[N]) {
  if (end == 0 || end > text.size() || is_ascii_alphanumeric(text[end - 1])) return 0;
  for (string_view mark : marks) {
    if (mark.back() != text[end - 1] || mark.size() > end) continue;
    size_t k = 1;
    while (k < mark.size() && mark[mark.size() - 1 - k] == text[end - 1 - k]) ++k;
    if (k == mark.size()) return k;
  }
  return 0;
}

size_t quote_or_bracket_at(string_view text, size_t pos) {
  return std::max(mark_at(text, pos, kOpeners), mark_at(text, pos, kClosers));
}

// Bytes of whitespace at text[pos], 0 if none. *breaking is false for the
// no-break spaces French puts before ? ! : ; and inside « »: they say
// "do not break here", so a gap of only those never splits.
size_t space_at(string_view text, size_t pos, bool* breaking) {
  const char c = text[pos];
  if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r') {
    *breaking = true;
    return 1;
  }
  constexpr string_view kNoBreakSpaces[] = {"\u00A0", "\u202F", "\u2007", "\u2009"};
  constexpr string_view kBreakingSpaces[] = {"\u3000"};
  if (size_t n = mark_at(text, pos, kNoBreakSpaces)) {
    *breaking = false;
    return n;
  }
  if (size_t n = mark_at(text, pos, kBreakingSpaces)) {
    *breaking = true;
    return n;
  }
  return 0;
}

// --- Letters ----------------------------------------------------------------

// The code point at text[pos] if it is ASCII or a well-formed two-byte
// sequence (U+0080..U+07FF), with its length in *length; 0 otherwise.
char32_t short_code_point_at(string_view text, size_t pos, size_t* length) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  *length = 1;
  if (lead < 0x80) return lead;
  if (lead < 0xC2 || lead > 0xDF || pos + 1 >= text.size()) return 0;
  const auto next = static_cast<unsigned char>(text[pos + 1]);
  if ((next & 0xC0) != 0x80) return 0;
  *length = 2;
  return (static_cast<char32_t>(lead & 0x1F) << 6) | (next & 0x3F);
}

bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }

bool is_uppercase(char32_t c) {
  if (c >= 'A' && c <= 'Z') return true;
  if (c >= 0xC0 && c <= 0xDE) return c != 0xD7;                // À..Þ, without ×
  if (c >= 0x100 && c <= 0x17F) {                              // Latin Extended-A: pairs
    if (c == 0x178) return true;                               // Ÿ (its ÿ is Latin-1)
    if (c == 0x138 || c == 0x149 || c == 0x17F) return false;  // ĸ ŉ ſ have no pair
    // Pairs start on an even code point, except Ĺ..ň and Ź..ž, which start on an odd one.
    const bool odd_first = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    return (c % 2 == 1) == odd_first;
  }
  if (c >= 0x391 && c <= 0x3A9) return c != 0x3A2;  // Greek Α..Ω (U+03A2 is unassigned)
  if (c >= 0x400 && c <= 0x42F) return true;        // Cyrillic Ѐ..Я
  return false;
}

bool is_letter(char32_t c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) return true;
  if (c >= 0xC0 && c <= 0x24F) return c != 0xD7 && c != 0xF7;  // Latin-1 and Extended-A/B
  return c >= 0x370 && c <= 0x4FF;                             // Greek, Cyrillic
}

// --- Words before a '.' -----------------------------------------------------

// Never end a sentence: titles and words that a name, a number or more text
// always follows. The brief's `Inc.` `Ltd.` `Jr.` and `a.m.`/`U.S.` (the
// latter as letter groups) are here too: "Apple Inc. CEO ..." is as common
// as "Apple Inc. The ...", and a missed split costs less than a wrong one.
// `etc.`/`usw.`/`usf.` are deliberately absent (edgemt/sentences.h).
constexpr string_view kEnglishAbbreviations[] = {
    "Mr",   "Mrs",  "Ms",   "Messrs", "Dr",   "Prof", "Rev",    "Hon",  "St",  "Mt",  "Ft",
    "Jr",   "Sr",   "Gen",  "Col",    "Lt",   "Sgt",  "Capt",   "Cmdr", "Gov", "Sen", "Rep",
    "Pres", "Supt", "vs",   "cf",     "Cf",   "al",   "approx", "Inc",  "Ltd", "Co",  "Corp",
    "Bros", "Ave",  "Blvd", "Rd",     "Dept", "Univ", "esp",    "viz"};
constexpr string_view kGermanAbbreviations[] = {
    "Mr",   "Mrs",  "Ms",   "Dr",   "Prof", "Hr",   "Hrn",  "Fr",   "Frl",  "Dipl", "Ing",
    "St",   "bzw",  "Bzw",  "ca",   "Ca",   "evtl", "Evtl", "ggf",  "Ggf",  "vgl",  "Vgl",
    "inkl", "Inkl", "exkl", "bspw", "Bspw", "sog",  "geb",  "gest", "gegr", "insb", "Insb",
    "bzgl", "Bzgl", "Str",  "Mio",  "Mrd",  "Tsd",  "allg", "ehem", "eigtl"};
constexpr string_view kFrenchAbbreviations[] = {
    "Mr", "Mrs", "Ms",  "MM", "Mme", "Mmes", "Mlle", "Mlles", "Dr", "Pr", "Prof",
    "St", "Ste", "Cie", "ex", "env", "av",   "apr",  "cf",    "Cf", "vs", "boul"};

// Abbreviations only before a number (`No. 5`, `Fig. 3`, `Jan. 5`): followed
// by a word they are the word (`No. We stay.`, `Ich traf Jan. Er ...`).
constexpr string_view kEnglishBeforeNumber[] = {
    "No",  "Nos", "Fig", "Figs", "fig", "Vol", "vol", "pp",   "Ch",  "Chap", "Eq", "Jan",
    "Feb", "Mar", "Apr", "Jun",  "Jul", "Aug", "Sep", "Sept", "Oct", "Nov",  "Dec"};
constexpr string_view kGermanBeforeNumber[] = {"Nr",  "Abb",  "Abs", "Art", "Bd",  "Kap", "Tel",
                                               "Jan", "Feb",  "Mär", "Apr", "Jun", "Jul", "Aug",
                                               "Sep", "Sept", "Okt", "Nov", "Dez"};
constexpr string_view kFrenchBeforeNumber[] = {"vol", "chap", "fig", "janv", "févr",
                                               "avr", "juil", "oct", "nov",  "déc"};

template <size_t N>
bool listed(string_view word, const string_view (&list)[N]) {
  return std::find(std::begin(list), std::end(list), word) != std::end(list);
}

struct Language {
  bool english = true;
  bool german = true;  // also the ordinal-number rule
  bool french = true;
};

Language language_of(string_view code) {
  if (code == "en") return {true, false, false};
  if (code == "de") return {false, true, false};
  if (code == "fr") return {false, false, true};
  return {};
}

// `Hauptstr.`, `Bahnhofstr.`: street names are compounds, so the list's
// `Str` does not catch them; no German word ends in "str".
bool is_german_street(string_view word) {
  return word.size() > 3 && word.substr(word.size() - 3) == "str";
}

bool is_abbreviation(string_view word, const Language& language) {
  return (language.english && listed(word, kEnglishAbbreviations)) ||
         (language.german && (listed(word, kGermanAbbreviations) || is_german_street(word))) ||
         (language.french && listed(word, kFrenchAbbreviations));
}

bool is_before_number_abbreviation(string_view word, const Language& language) {
  return (language.english && listed(word, kEnglishBeforeNumber)) ||
         (language.german && listed(word, kGermanBeforeNumber)) ||
         (language.french && listed(word, kFrenchBeforeNumber));
}

// Exactly one letter: an initial (`J`, `W`, `Ö`) or `z`/`B` of `z. B.`.
bool is_single_letter(string_view word) {
  size_t length = 0;
  return !word.empty() && is_letter(short_code_point_at(word, 0, &length)) && length == word.size();
}

// Letter groups of one or two letters joined by '.' (and '-'), with at least
// one '.': e.g, U.S, a.m, z.B, d.h, u.a, Ph.D, c.-à-d, J.-C. Longer groups
// are words (Node.js, example.com) and end a sentence.
bool is_letter_groups(string_view word) {
  bool has_dot = false;
  size_t groups = 0;
  size_t letters_in_group = 0;
  for (size_t pos = 0; pos < word.size();) {
    const char c = word[pos];
    if (c == '.' || c == '-') {
      if (pos == 0) return false;
      has_dot = has_dot || c == '.';
      letters_in_group = 0;
      ++pos;
      continue;
    }
    size_t length = 0;
    if (!is_letter(short_code_point_at(word, pos, &length))) return false;
    if (++letters_in_group > 2) return false;
    if (letters_in_group == 1) ++groups;
    pos += length;
  }
  return has_dot && groups >= 2;
}

// Digits with . , : separators inside: 3, 2010, 3.5, 1,000.50, 24.11, 10:30.
bool is_number(string_view word) {
  if (word.empty() || !is_digit(static_cast<unsigned char>(word.front())) ||
      !is_digit(static_cast<unsigned char>(word.back()))) {
    return false;
  }
  return std::all_of(word.begin(), word.end(), [](char c) {
    return is_digit(static_cast<unsigned char>(c)) || c == '.' || c == ',' || c == ':';
  });
}

// What a German "N." can be other than a sentence end: an ordinal (1 to 3
// digits: `3. Mai`, `100. Geburtstag`) or a day.month date (`24.11.`).
bool is_ordinal_shaped(string_view number) {
  const size_t dot = number.find('.');
  const string_view day = number.substr(0, dot);
  const string_view month = dot == string_view::npos ? string_view() : number.substr(dot + 1);
  const auto all_digits = [](string_view part, size_t max_digits) {
    return !part.empty() && part.size() <= max_digits &&
           std::all_of(part.begin(), part.end(),
                       [](char c) { return is_digit(static_cast<unsigned char>(c)); });
  };
  if (dot == string_view::npos) return all_digits(day, 3);
  return all_digits(day, 2) && all_digits(month, 2);
}

// German words that start sentences but cannot follow an ordinal (an
// ordinal is an adjective: an article, pronoun or preposition never comes
// after it), so that `mit der Nummer 28. Ein Mann ...` still splits while
// `den 2. Platz` and `am 3. Mai` do not.
constexpr string_view kGermanSentenceOpeners[] = {
    "Der",   "Die",   "Das",     "Den",      "Dem",    "Des",    "Ein",    "Eine",    "Einen",
    "Einem", "Einer", "Eines",   "Er",       "Sie",    "Es",     "Ich",    "Du",      "Wir",
    "Ihr",   "Man",   "Dies",    "Diese",    "Dieser", "Dieses", "Diesen", "Dann",    "Danach",
    "Da",    "Dort",  "Hier",    "Heute",    "Jetzt",  "Nun",    "Aber",   "Und",     "Oder",
    "Doch",  "Auch",  "Deshalb", "Außerdem", "Später", "Dabei",  "Im",     "Am",      "In",
    "An",    "Auf",   "Aus",     "Bei",      "Mit",    "Nach",   "Vor",    "Von",     "Vom",
    "Zu",    "Zum",   "Zur",     "Über",     "Unter",  "Hinter", "Neben",  "Während", "Um",
    "Für",   "Gegen", "Durch",   "Alle",     "Viele",  "Einige", "Mehrere"};

// Roman numerals as list markers (`II. Methods`).
bool is_roman_numeral(string_view word) {
  return word.size() >= 2 && word.size() <= 6 &&
         word.find_first_not_of("IVXLCDM") == string_view::npos;
}

// --- Tokens -----------------------------------------------------------------

// How a token ends, as far as sentence boundaries go.
enum class Ending {
  kNone,          // no terminator at its end
  kSentence,      // ends a sentence if a sentence start follows
  kAlways,        // CJK 。！？: ends a sentence whatever follows
  kAbbreviation,  // a '.' that never ends a sentence
  kBeforeNumber,  // `No.`: as kSentence, except before a digit
  kNumber,        // `3.`: a list marker at a sentence start, maybe a German ordinal
};

struct Token {
  size_t begin = 0;
  size_t end = 0;
  bool breaking_space_before = false;  // the gap before it may split
  Ending ending = Ending::kNone;
  bool ordinal_shaped = false;                                          // with Ending::kNumber
  enum class Marks { kNone, kOpening, kClosing } marks = Marks::kNone;  // only quotes/brackets
};

Token::Marks marks_only(string_view token) {
  for (size_t pos = 0; pos < token.size();) {
    const size_t length = quote_or_bracket_at(token, pos);
    if (length == 0) return Token::Marks::kNone;
    pos += length;
  }
  return mark_at(token, 0, kOpenOnly) > 0 ? Token::Marks::kOpening : Token::Marks::kClosing;
}

// Classifies a word that a single '.' ends. `body` is the token before the '.'.
Ending period_ending(string_view body, const Language& language, bool* ordinal_shaped) {
  // `"Stop".` `(1990).`: whatever is inside, the quote/bracket ends the word.
  if (body.empty() || mark_before(body, body.size(), kClosers) > 0) return Ending::kSentence;
  size_t start = 0;
  while (start < body.size()) {
    const size_t length = mark_at(body, start, kOpeners);
    if (length == 0) break;
    start += length;
  }
  const string_view word = body.substr(start);
  if (word.empty()) return Ending::kSentence;
  if (is_number(word)) {
    *ordinal_shaped = is_ordinal_shaped(word);
    return Ending::kNumber;
  }
  if (is_single_letter(word) || is_letter_groups(word) || is_abbreviation(word, language)) {
    return Ending::kAbbreviation;
  }
  if (is_before_number_abbreviation(word, language)) return Ending::kBeforeNumber;
  if (is_roman_numeral(word)) return Ending::kNumber;
  return Ending::kSentence;
}

Ending token_ending(string_view token, const Language& language, bool* ordinal_shaped) {
  size_t end = token.size();
  while (size_t length = mark_before(token, end, kClosers)) end -= length;
  const size_t run_end = end;
  size_t dots = 0;
  bool strong = false;    // ! ? ‽
  bool ellipsis = false;  // …
  bool cjk = false;
  while (end > 0) {
    if (size_t length = mark_before(token, end, kCjkTerminators)) {
      cjk = true;
      end -= length;
    } else if (size_t n = mark_before(token, end, kTerminators)) {
      const string_view mark = token.substr(end - n, n);
      dots += mark == ".";
      strong = strong || mark == "!" || mark == "?" || mark == "‽";
      ellipsis = ellipsis || mark == "…";
      end -= n;
    } else {
      break;
    }
  }
  if (end == run_end) return Ending::kNone;
  if (cjk) return Ending::kAlways;
  if (strong) return Ending::kSentence;
  const string_view body = token.substr(0, end);
  if (ellipsis || dots > 1) {
    // `[...]` `(…)`: an omission inside a sentence.
    return mark_before(body, body.size(), kOpeners) > 0 ? Ending::kNone : Ending::kSentence;
  }
  return period_ending(body, language, ordinal_shaped);
}

// Reads the token after line[*pos] (skipping whitespace) into *token and
// moves *pos past it; false at the end of the line.
bool read_token(string_view line, const Language& language, size_t* pos, Token* token) {
  *token = Token();
  bool breaking = false;
  while (*pos < line.size()) {
    const size_t length = space_at(line, *pos, &breaking);
    if (length == 0) break;
    token->breaking_space_before = token->breaking_space_before || breaking;
    *pos += length;
  }
  if (*pos == line.size()) return false;
  token->begin = *pos;
  while (*pos < line.size() && space_at(line, *pos, &breaking) == 0) ++*pos;
  token->end = *pos;
  const string_view text = line.substr(token->begin, token->end - token->begin);
  token->ending = token_ending(text, language, &token->ordinal_shaped);
  token->marks = marks_only(text);
  return true;
}

// --- Splitting --------------------------------------------------------------

// Tokens stream through a window of four: deciding the gap after token i
// looks at tokens i - 1 (the sentence's end, before a lone `»`) to i + 2
// (the sentence start, after a lone `«`). Memory besides the result is
// constant, so a long line stays in cache and costs the same per byte.
class LineSplitter {
 public:
  LineSplitter(string_view line, const Language& language) : line_(line), language_(language) {}

  std::vector<SentenceSpan> split() {
    std::vector<SentenceSpan> spans;
    if (!has_token(0)) return spans;
    size_t sentence_begin = token(0).begin;
    size_t first_token = 0;  // of the current sentence; kNoToken after a CJK cut
    size_t last_end = 0;
    for (size_t i = 0; has_token(i); ++i) {
      has_token(i + 2);  // the look-ahead of splits_after(i)
      const Token& current = token(i);
      last_end = current.end;
      for (size_t cut : walk(current)) {
        spans.push_back({sentence_begin, cut});
        sentence_begin = cut;
        first_token = kNoToken;
      }
      if (i + 1 < read_ && depth_ == 0 && splits_after(i, first_token)) {
        spans.push_back({sentence_begin, current.end});
        sentence_begin = token(i + 1).begin;
        first_token = i + 1;
      }
    }
    spans.push_back({sentence_begin, last_end});
    return spans;
  }

 private:
  static constexpr size_t kNoToken = static_cast<size_t>(-1);
  static constexpr size_t kWindow = 4;

  // Reads tokens until token `index` is read; false if the line has fewer.
  // Only tokens index - 3 .. index stay available.
  bool has_token(size_t index) {
    while (read_ <= index && !at_end_) {
      if (read_token(line_, language_, &pos_, &window_[read_ % kWindow])) {
        ++read_;
      } else {
        at_end_ = true;
      }
    }
    return index < read_;
  }

  const Token& token(size_t index) const { return window_[index % kWindow]; }

  // The start of the text after a gap, as far as the rules look at it.
  struct NextStart {
    bool starts_sentence = false;  // an uppercase letter or a digit
    bool digit = false;
    string_view word;  // its leading letters: `Ein` of `Ein,`
  };

  string_view text(const Token& token) const {
    return line_.substr(token.begin, token.end - token.begin);
  }

  // Walks `token` once, mark by mark. Updates depth_ (the quotes and
  // brackets open: nothing splits inside them, so `He said "Stop. Go away."
  // Then ...` splits only after the closing quote). A quote at the start of a
  // token opens and anywhere else closes (`"Stop."`, `Tech"`, `„Open“-Schild`,
  // `"roger smith",`), so „so“, “so”, «so», »so« and "so" all pair up
  // whatever the language; brackets say themselves what they do. Returns
  // where a CJK terminator (and the closers after it) is followed by more
  // text without a space, outside quotes and brackets: `好。你呢？`.
  std::vector<size_t> walk(const Token& token) {
    std::vector<size_t> cuts;
    const string_view word = text(token);
    if (token.marks != Token::Marks::kNone) {  // ` « ` or ` » ` on its own
      for (size_t pos = 0; pos < word.size();) {
        if (mark_at(word, pos, kPairedMarks) > 0) nest(token.marks == Token::Marks::kOpening);
        pos += std::max<size_t>(1, quote_or_bracket_at(word, pos));
      }
      return cuts;
    }
    bool at_start = true;
    for (size_t pos = 0; pos < word.size();) {
      size_t length = 0;
      if ((at_start && (length = mark_at(word, pos, kOpeners)) > 0) ||
          (length = mark_at(word, pos, kOpeningBrackets)) > 0) {
        if (mark_at(word, pos, kPairedMarks) > 0) nest(true);
        pos += length;
        continue;
      }
      at_start = false;
      if ((length = mark_at(word, pos, kClosers)) > 0) {
        if (mark_at(word, pos, kPairedMarks) > 0) nest(false);
        pos += length;
      } else if ((length = mark_at(word, pos, kCjkTerminators)) > 0) {
        pos += length;
        while (pos < word.size()) {  // `好。」然后`: the 」 is this sentence's
          if ((length = mark_at(word, pos, kClosers)) > 0) {
            if (mark_at(word, pos, kPairedMarks) > 0) nest(false);
          } else if ((length = std::max(mark_at(word, pos, kTerminators),
                                        mark_at(word, pos, kCjkTerminators))) == 0) {
            break;
          }
          pos += length;
        }
        if (pos < word.size() && depth_ == 0) cuts.push_back(token.begin + pos);
      } else {
        ++pos;
      }
    }
    return cuts;
  }

  // An unclosed quote or bracket stops splitting for the rest of the line,
  // which is the safe direction; a stray closing one changes nothing.
  void nest(bool open) {
    if (open) {
      ++depth_;
    } else if (depth_ > 0) {
      --depth_;
    }
  }

  // What starts at token j, after any opening marks (also after a separate
  // « token, as French spaces it).
  NextStart next_start(size_t j) const {
    NextStart next;
    for (size_t k = j; k < read_ && k <= j + 1; ++k) {
      const string_view word = text(token(k));
      size_t pos = 0;
      while (pos < word.size()) {
        const size_t length = mark_at(word, pos, kOpeners);
        if (length == 0) break;
        pos += length;
      }
      if (pos == word.size()) {
        if (token(k).marks == Token::Marks::kOpening) continue;
        return next;
      }
      size_t length = 0;
      const char32_t c = short_code_point_at(word, pos, &length);
      next.digit = is_digit(c);
      next.starts_sentence = next.digit || is_uppercase(c);
      // Letters are at most two bytes long, and only the first dozen matter.
      size_t end = pos;
      while (end < word.size() && end - pos < 24 &&
             is_letter(short_code_point_at(word, end, &length))) {
        end += length;
      }
      next.word = word.substr(pos, end - pos);
      return next;
    }
    return next;
  }

  // Whether the gap between tokens i and i + 1 ends the current sentence,
  // which began at token `first_token`.
  bool splits_after(size_t i, size_t first_token) const {
    if (!token(i + 1).breaking_space_before) return false;
    // `Bonjour ! »`: the » closes this sentence; the next gap decides.
    if (token(i + 1).marks == Token::Marks::kClosing) return false;
    size_t ender = i;
    if (token(i).marks == Token::Marks::kClosing && i > 0) ender = i - 1;
    const Token& end = token(ender);
    switch (end.ending) {
      case Ending::kNone:
      case Ending::kAbbreviation:
        return false;
      case Ending::kAlways:
        return true;
      case Ending::kSentence:
        return next_start(i + 1).starts_sentence;
      case Ending::kBeforeNumber: {
        const NextStart next = next_start(i + 1);
        return next.starts_sentence && !next.digit;
      }
      case Ending::kNumber: {
        if (ender == first_token) return false;  // a list marker: `1. Introduction`
        const NextStart next = next_start(i + 1);
        if (end.ordinal_shaped && language_.german) {  // `am 3. Mai`, `den 2. Platz`
          return next.starts_sentence && listed(next.word, kGermanSentenceOpeners);
        }
        return next.starts_sentence;
      }
    }
    return false;
  }

  string_view line_;
  Language language_;
  size_t pos_ = 0;   // where the next token's search begins
  size_t read_ = 0;  // tokens read so far
  bool at_end_ = false;
  uint64_t depth_ = 0;                 // quotes and brackets open (walk)
  std::array<Token, kWindow> window_;  // token k is window_[k % kWindow]
};

}  // namespace

bool has_own_splitting_rules(std::string_view language) {
  return language == "en" || language == "de" || language == "fr";
}

std::vector<SentenceSpan> split_sentences(std::string_view line, std::string_view language) {
  return LineSplitter(line, language_of(language)).split();
}

std::vector<SentenceSpan> sentence_spans(std::string_view line, bool split,
                                         std::string_view language) {
  std::vector<SentenceSpan> spans;
  if (split) spans = split_sentences(line, language);
  if (spans.size() <= 1) spans.assign(1, SentenceSpan{0, line.size()});
  return spans;
}

std::string join_sentences(std::string_view line, const std::vector<SentenceSpan>& spans,
                           const std::vector<std::string>& translations) {
  std::string joined;
  for (size_t k = 0; k < translations.size(); ++k) {
    if (k > 0) {
      const bool gap_known =
          k < spans.size() && spans[k - 1].end <= spans[k].begin && spans[k].begin <= line.size();
      if (gap_known) {
        joined += line.substr(spans[k - 1].end, spans[k].begin - spans[k - 1].end);
      } else {
        joined += ' ';
      }
    }
    joined += translations[k];
  }
  return joined;
}

}  // namespace edgemt
