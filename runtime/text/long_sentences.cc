// cut_long_sentence and source_spans (edgemt/sentences.h): sentences
// longer than the model takes, cut into pieces that fit.
#include <algorithm>
#include <utility>

#include "edgemt/sentences.h"

namespace edgemt {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// A cut point: the piece before it ends at `end`, the next begins at `next`
// (after the whitespace run); `after_punctuation` when a , ; : or a dash
// ends the piece.
struct Cut {
  size_t end;
  size_t next;
  bool after_punctuation;
};

bool ends_in_punctuation(std::string_view text, size_t begin, size_t end) {
  if (end == begin) return false;
  const char last = text[end - 1];
  if (last == ',' || last == ';' || last == ':' || last == '-') return true;
  // – (E2 80 93) and — (E2 80 94)
  return end - begin >= 3 && text.substr(end - 3, 2) == "\xE2\x80" &&
         (text[end - 1] == '\x93' || text[end - 1] == '\x94');
}

// Whitespace cuts inside (begin, end), in order.
std::vector<Cut> whitespace_cuts(std::string_view text, size_t begin, size_t end) {
  std::vector<Cut> cuts;
  size_t i = begin;
  while (i < end) {
    if (!is_space(text[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < end && is_space(text[j])) ++j;
    if (i > begin && j < end) cuts.push_back({i, j, ends_in_punctuation(text, begin, i)});
    i = j;
  }
  return cuts;
}

// The longest prefix text[begin, end') of whole UTF-8 characters that fits;
// at least one character.
size_t character_cut(std::string_view text, size_t begin, size_t end, size_t max_tokens,
                     const TokenCounter& count) {
  size_t low = begin + 1, high = end;  // the answer is in [low, high]
  while (low < high && is_utf8_continuation(text[low])) ++low;
  while (low < high) {
    size_t middle = low + (high - low + 1) / 2;
    while (middle < end && is_utf8_continuation(text[middle])) ++middle;
    if (middle > high) middle = high;
    if (count(text.substr(begin, middle - begin)) <= max_tokens) {
      low = middle;
    } else {
      size_t below = middle - 1;
      while (below > low && is_utf8_continuation(text[below])) --below;
      high = below;
    }
  }
  return low;
}

}  // namespace

std::vector<SentenceSpan> cut_long_sentence(std::string_view text, SentenceSpan span,
                                            size_t max_tokens, const TokenCounter& count) {
  std::vector<SentenceSpan> pieces;
  size_t begin = span.begin;
  while (begin < span.end) {
    const std::string_view rest = text.substr(begin, span.end - begin);
    if (count(rest) <= max_tokens) {
      pieces.push_back({begin, span.end});
      break;
    }
    // The furthest whitespace cut whose piece fits (token counts grow with
    // the prefix): a binary search over the cuts.
    const std::vector<Cut> cuts = whitespace_cuts(text, begin, span.end);
    size_t fitting = 0;  // cuts[0, fitting) fit
    size_t low = 0, high = cuts.size();
    while (low < high) {
      const size_t middle = low + (high - low) / 2;
      if (count(text.substr(begin, cuts[middle].end - begin)) <= max_tokens) {
        low = middle + 1;
      } else {
        high = middle;
      }
    }
    fitting = low;
    if (fitting == 0) {
      // Not one word fits: cut between characters.
      const size_t end = character_cut(text, begin, span.end, max_tokens, count);
      pieces.push_back({begin, end});
      begin = end;
      continue;
    }
    Cut chosen = cuts[fitting - 1];
    for (size_t k = fitting; k-- > 0;) {
      if (cuts[k].end - begin < (chosen.end - begin) / 2) break;
      if (cuts[k].after_punctuation) {
        chosen = cuts[k];
        break;
      }
    }
    pieces.push_back({begin, chosen.end});
    begin = chosen.next;
  }
  return pieces;
}

std::vector<EncodedSpan> source_spans(std::string_view line, bool split,
                                      std::string_view language, size_t max_tokens,
                                      const SourceEncoder& encode) {
  const auto encoded = [&](SentenceSpan span) {
    EncodedSpan out;
    out.span = span;
    out.encoded = encode(line.substr(span.begin, span.end - span.begin), &out.ids);
    return out;
  };
  std::vector<int32_t> scratch;
  const TokenCounter count = [&](std::string_view text) -> size_t {
    return encode(text, &scratch) ? scratch.size() : 0;
  };
  std::vector<EncodedSpan> sources;
  for (const SentenceSpan& sentence : sentence_spans(line, split, language)) {
    EncodedSpan whole = encoded(sentence);
    if (!split || !whole.encoded || whole.ids.size() <= max_tokens) {
      sources.push_back(std::move(whole));
      continue;
    }
    for (const SentenceSpan& piece : cut_long_sentence(line, sentence, max_tokens, count)) {
      sources.push_back(encoded(piece));
    }
  }
  return sources;
}

}  // namespace edgemt
