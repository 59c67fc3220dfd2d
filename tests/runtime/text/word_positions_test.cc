// cli::words_in_whole: a sentence's words as words of its line, for the
// alignment of split lines (also when sentences meet without a space).
// Built into edgemt_cli_tests with tools/cli/translate_word_positions.cc
// (tests/CMakeLists.txt).
#include "edgemt/alignment.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace edgemt {
namespace {

using Words = std::vector<size_t>;

TEST_CASE("text/word_positions: sentences of a line") {
  const std::string line = "Two dogs run.  A  cat\tsleeps.";
  CHECK(words_in_whole(line, "Two dogs run.", 0) == Words{0, 1, 2});
  CHECK(words_in_whole(line, "A  cat\tsleeps.", 15) == Words{3, 4, 5});
  CHECK(words_in_whole(line, "", 3).empty());
}

TEST_CASE("text/word_positions: sentences joined without a space share a word") {
  const std::string line = "一。二 三";
  CHECK(words_in_whole(line, "一。", 0) == Words{0});
  CHECK(words_in_whole(line, "二 三", 6) == Words{0, 1});
}

}  // namespace
}  // namespace edgemt
