// UTF-8 validation, in the core: the model verifier checks the strings of an
// embedded SentencePiece model with it, the tokenizer checks its input.
#pragma once

#include <cstddef>
#include <string_view>

namespace edgemt {

// True when `text` is well-formed UTF-8 (no overlongs, surrogates or code
// points above U+10FFFF). On failure *error_offset (if not null) is the
// first bad byte.
bool is_valid_utf8(std::string_view text, size_t* error_offset);

}  // namespace edgemt
