// cut_long_sentence: a sentence with more tokens than the model takes, cut
// into pieces that fit, at the safest points there are.
//
// A sentence over the model's position table cannot be translated whole.
// Rather than failing the line, `edgemt translate` translates it piece by
// piece and joins the pieces' translations with the text between them (the
// whitespace the cut fell on), as it joins sentences. A cut falls, in order
// of preference, on whitespace after , ; : or a dash ( - – — between
// spaces), on any other whitespace, and only when a piece of one word is
// still too long, between two UTF-8 characters. Each piece is as long as
// fits, except that a cut after punctuation is preferred when it keeps at
// least half of what a whitespace cut would.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include "edgemt/sentences.h"

namespace edgemt::cli {

// How many source tokens `text` encodes to (prefix token included).
using TokenCounter = std::function<size_t(std::string_view text)>;

// The pieces of text[span.begin, span.end) (valid UTF-8), each with at most
// `max_tokens` tokens by `count`, in order, without the whitespace between
// them; the span itself when it fits. A piece of one UTF-8 character that
// does not fit is returned as it is (the caller reports it).
std::vector<SentenceSpan> cut_long_sentence(std::string_view text, SentenceSpan span,
                                            size_t max_tokens, const TokenCounter& count);

}  // namespace edgemt::cli
