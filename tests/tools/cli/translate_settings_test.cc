// cli::read_translate_settings and source_language_note for --source-lang
// (issue 38): a language code is accepted, with a note when it has no
// splitting rules of its own; what is not a language code is a usage error
// naming it. Built into edgemt_cli_tests with the CLI's objects
// (tests/CMakeLists.txt).
#include "cli/translate_settings.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace edgemt::cli {
namespace {

struct Parsed {
  bool ok = false;
  std::string error;
  TranslateSettings settings;
};

Parsed parse(std::vector<std::string> words) {
  words.insert(words.begin(), {"edgemt", "translate", "-m", "model.emt"});
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  Parsed p;
  p.ok = read_translate_settings(static_cast<int>(argv.size()), argv.data(), &p.settings,
                                 &p.error);
  return p;
}

TEST_CASE("cli/translate_settings: --source-lang with rules of its own: no note") {
  for (const char* language : {"en", "de", "fr"}) {
    const Parsed p = parse({"--source-lang", language});
    REQUIRE(p.ok);
    CHECK(source_language_note(p.settings).empty());
  }
  const Parsed none = parse({});
  REQUIRE(none.ok);
  CHECK(source_language_note(none.settings).empty());
}

TEST_CASE("cli/translate_settings: another language code gets a note") {
  for (const char* language : {"es", "de-AT", "ber"}) {
    const Parsed p = parse({"--source-lang", language});
    REQUIRE(p.ok);
    const std::string note = source_language_note(p.settings);
    CHECK(note.find(std::string("'") + language + "'") != std::string::npos);
    CHECK(note.find("generic rules") != std::string::npos);
  }
}

TEST_CASE("cli/translate_settings: what is not a language code is refused") {
  for (const char* value : {"xx", "12", "english", "en us"}) {
    const Parsed p = parse({"--source-lang", value});
    CHECK_FALSE(p.ok);
    CHECK(p.error.find(std::string("not '") + value + "'") != std::string::npos);
    CHECK(p.error.find("--source-lang") != std::string::npos);
  }
}

TEST_CASE("cli/translate_settings: texts after the options are the input") {
  const Parsed p = parse({"--beam", "2", "A dog runs.", "--", "-a dash first"});
  REQUIRE(p.ok);
  CHECK(p.settings.texts == std::vector<std::string>{"A dog runs.", "-a dash first"});
  CHECK(p.settings.input_path.empty());
  CHECK_FALSE(p.settings.paragraphs);
  CHECK(p.settings.batch == 16);  // not the terminal's 1: the texts are all there
}

TEST_CASE("cli/translate_settings: texts and -i FILE together are refused") {
  const Parsed p = parse({"-i", "in.txt", "A dog runs."});
  CHECK_FALSE(p.ok);
  CHECK(p.error == "give texts to translate or '-i FILE', not both");
}

TEST_CASE("cli/translate_settings: --paragraphs") {
  CHECK(parse({"--paragraphs"}).settings.paragraphs);
}

TEST_CASE("cli/translate_settings: no model is a usage error, texts or not") {
  std::vector<std::string> words = {"edgemt", "translate", "A dog runs."};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  TranslateSettings settings;
  std::string error;
  CHECK_FALSE(read_translate_settings(static_cast<int>(argv.size()), argv.data(), &settings,
                                      &error));
  CHECK(error == "a model is required (-m MODEL)");
}

}  // namespace
}  // namespace edgemt::cli
