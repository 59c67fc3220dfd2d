// cli::ProgressBar::format: counts and speed always; bar, percentage and ETA
// only with the input's size; no ETA before any byte is done or after the
// last. Built into edgemt_cli_tests with tools/cli/progress_bar.cc
// (tests/CMakeLists.txt).
#include "cli/progress_bar.h"

#include <doctest/doctest.h>

#include <string>

namespace edgemt::cli {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("cli/progress_bar: a known size gives bar, percentage and ETA") {
  // A quarter of 4000 bytes in 10 s: 30 s to go.
  const std::string text = ProgressBar::format(100, 120, 1000, 4000, 10.0);
  CHECK(text == "edgemt: [#####...............]  25%  100 lines  120 sent  12.0 sent/s  ETA 0:30");
}

TEST_CASE("cli/progress_bar: an unknown size gives counts and speed only") {
  const std::string text = ProgressBar::format(7, 9, 500, 0, 3.0);
  CHECK(text == "edgemt: 7 lines  9 sent  3.0 sent/s");
}

TEST_CASE("cli/progress_bar: no ETA at the start or the end, hours when long") {
  CHECK_FALSE(contains(ProgressBar::format(0, 0, 0, 4000, 1.0), "ETA"));
  CHECK_FALSE(contains(ProgressBar::format(10, 10, 4000, 4000, 2.0), "ETA"));
  CHECK(contains(ProgressBar::format(10, 10, 4000, 4000, 2.0), "[####################] 100%"));
  CHECK(contains(ProgressBar::format(1, 1, 1, 4000, 10.0), "ETA 11:06:30"));
  CHECK_FALSE(contains(ProgressBar::format(0, 0, 0, 0, 0.0), "sent/s"));
}

}  // namespace
}  // namespace edgemt::cli
