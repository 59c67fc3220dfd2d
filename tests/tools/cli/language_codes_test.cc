// cli::is_language_code: ISO 639-1 codes (and the retired ones still in use),
// three-letter codes, with subtags after '-' or '_', in any case; nothing
// else (issue 38: `--source-lang xx` was accepted silently). Built into
// edgemt_cli_tests with tools/cli/language_codes.cc (tests/CMakeLists.txt).
#include "cli/language_codes.h"

#include <doctest/doctest.h>

#include <string_view>

namespace edgemt::cli {
namespace {

TEST_CASE("cli/language_codes: language tags are codes") {
  for (std::string_view code : {"en", "de", "fr", "es", "zh", "sh", "iw", "EN", "De", "ber",
                                "fse", "eng", "de-AT", "pt_BR", "zh-Hans-CN", "en-US-x-twain",
                                "es-419"}) {
    INFO(code);
    CHECK(is_language_code(code));
  }
}

TEST_CASE("cli/language_codes: anything else is not") {
  for (std::string_view code : {"", "xx", "ed", "qq", "e", "engl", "english", "12", "e1", "en-",
                                "-en", "en--US", "en-toolongsubtag", "en US", "en.US", "de-Ä",
                                "ü", "en\n"}) {
    INFO(code);
    CHECK_FALSE(is_language_code(code));
  }
}

}  // namespace
}  // namespace edgemt::cli
