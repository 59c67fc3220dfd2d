// Whether a `--source-lang` value is a language code at all.
//
// `--source-lang xx` (or a typo such as `ed`) was accepted without a word
// and split sentences by the generic rules. A value is accepted when it is a
// language tag: an ISO 639-1 code (en, de; the retired iw, in, ji, jw, mo,
// sh too, which older corpora and OPUS-MT use) or three letters (ISO 639-2/3:
// ber, fse, which cannot all be listed here), optionally followed by subtags
// of 1 to 8 letters or digits after '-' or '_' (de-AT, pt_BR, zh-Hans-CN).
// Case does not matter, as in BCP 47.
#pragma once

#include <string_view>

namespace edgemt::cli {

bool is_language_code(std::string_view code);

}  // namespace edgemt::cli
