// cli::texts_input_fd and cli::ParagraphJoiner (`edgemt translate TEXT...`
// and --paragraphs). Built into edgemt_cli_tests (tests/CMakeLists.txt).
#include "cli/translate_inputs.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace edgemt::cli {
namespace {

std::string read_all(int fd) {
  std::string data;
  char buffer[256];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) data.append(buffer, static_cast<size_t>(n));
  return data;
}

TEST_CASE("cli/translate_inputs: texts become lines, their own line breaks spaces") {
  std::string error;
  const int fd = texts_input_fd({"A dog runs.", "Two\ncats\r\nsleep.", ""}, &error);
  REQUIRE(fd >= 0);
  CHECK(read_all(fd) == "A dog runs.\nTwo cats  sleep.\n\n");
  ::close(fd);
}

struct Joined {
  std::vector<std::string> texts;
  std::vector<size_t> numbers;
  std::vector<bool> too_long;
};

Joined join(const std::vector<std::string>& lines, size_t max_bytes = 1000) {
  ParagraphJoiner joiner(max_bytes);
  Joined out;
  const auto take = [&](std::vector<InputLine> inputs) {
    for (const InputLine& input : inputs) {
      out.texts.push_back(input.line.text);
      out.numbers.push_back(input.line.number);
      out.too_long.push_back(input.too_long);
    }
  };
  size_t number = 0;
  for (const std::string& text : lines) {
    InputLine input;
    input.line.text = text;
    input.line.number = ++number;
    input.bytes = text.size();
    take(joiner.add(std::move(input)));
  }
  take(joiner.finish());
  return out;
}

TEST_CASE("cli/translate_inputs: paragraphs up to blank lines, blank lines kept") {
  const Joined j = join({"A man is  ", "  standing on a ladder.", "", "", "Two dogs", "play."});
  CHECK(j.texts == std::vector<std::string>{"A man is standing on a ladder.", "", "",
                                            "Two dogs play."});
  CHECK(j.numbers == std::vector<size_t>{1, 3, 4, 5});
}

TEST_CASE("cli/translate_inputs: a blank line of spaces ends a paragraph too") {
  CHECK(join({"one", " \t", "two"}).texts == std::vector<std::string>{"one", " \t", "two"});
}

TEST_CASE("cli/translate_inputs: a paragraph longer than the limit is too long") {
  const Joined j = join({"aaaa", "bbbb", "", "cc"}, 8);
  CHECK(j.too_long == std::vector<bool>{true, false, false});
  CHECK(j.texts[0].empty());  // nothing past the limit is kept
  CHECK(j.texts[2] == "cc");
}

}  // namespace
}  // namespace edgemt::cli
