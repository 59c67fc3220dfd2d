// cli::Arguments: --name value, --name=value, -x value, switches without a
// value, positionals, and the errors (unknown flag, missing value, a value
// for a switch, malformed or out-of-range numbers), each naming the flag.
//
// Not globbed into edgemt_runtime_tests (that takes tests/runtime/ only):
// tools/cli/ is compiled into the `edgemt` executable, so this file is built
// with tools/cli/arguments.cc into its own executable (tests/CMakeLists.txt).
#include "cli/arguments.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace edgemt::cli {
namespace {

const std::vector<FlagSpec> kSpecs = {
    {"model", 'm', true}, {"beam", 'b', true}, {"alpha", '\0', true}, {"quiet", 'q', false}};

// Parses `words` as argv[first..] after a program name and a subcommand.
struct Parsed {
  bool ok = false;
  std::string error;
  Arguments args;
};

Parsed parse(std::vector<std::string> words) {
  words.insert(words.begin(), {"edgemt", "translate"});
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  Parsed p;
  p.ok = p.args.parse(static_cast<int>(argv.size()), argv.data(), 2, kSpecs, &p.error);
  return p;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("cli/arguments: long, inline, alias, switch and positional forms") {
  Parsed p = parse({"in.txt", "--model", "a.emt", "--beam=4", "-q", "out.txt", "--alpha=",
                    "-b", "5"});
  REQUIRE_MESSAGE(p.ok, p.error);
  CHECK(p.args.get("model", "none") == "a.emt");
  CHECK(p.args.get("beam", "none") == "5");  // the last occurrence wins
  CHECK(p.args.has("quiet"));
  CHECK(p.args.get("quiet", "") == "1");
  CHECK(p.args.has("alpha"));
  CHECK(p.args.get("alpha", "x").empty());  // --alpha= is an empty value
  CHECK(p.args.positional() == (std::vector<std::string>{"in.txt", "out.txt"}));
}

TEST_CASE("cli/arguments: get_model_only wants -m MODEL and no positional argument") {
  std::string model;
  std::string error;
  Parsed p = parse({"-m", "a.emt", "-q"});
  REQUIRE_MESSAGE(p.ok, p.error);
  CHECK(p.args.get_model_only(&model, &error));
  CHECK(model == "a.emt");
  p = parse({"-q"});
  CHECK_FALSE(p.args.get_model_only(&model, &error));
  CHECK(error == "a model is required (-m MODEL)");
  p = parse({"-m", "a.emt", "stray.txt"});
  CHECK_FALSE(p.args.get_model_only(&model, &error));
  CHECK(error == "unexpected argument 'stray.txt'");
}

TEST_CASE("cli/arguments: words before `first` are not parsed and absent flags use fallbacks") {
  Parsed p = parse({});
  REQUIRE(p.ok);
  CHECK(p.args.positional().empty());  // "edgemt" and "translate" skipped
  CHECK_FALSE(p.args.has("model"));
  CHECK(p.args.get("model", "default.emt") == "default.emt");
  size_t beam = 0;
  std::string error;
  CHECK(p.args.get_size("beam", 4, 1, 16, &beam, &error));
  CHECK(beam == 4);
  float alpha = 0.0f;
  CHECK(p.args.get_float("alpha", 0.6f, &alpha, &error));
  CHECK(alpha == 0.6f);
  CHECK(error.empty());
}

TEST_CASE("cli/arguments: values may look like flags or be a lone dash") {
  Parsed p = parse({"--model", "--beam", "-", "-x"});
  // "--beam" is the model's value; "-" is a positional; "-x" is an unknown
  // alias.
  CHECK_FALSE(p.ok);
  CHECK(contains(p.error, "'-x'"));
  Parsed q = parse({"--model", "--beam", "-"});
  REQUIRE_MESSAGE(q.ok, q.error);
  CHECK(q.args.get("model", "") == "--beam");
  CHECK_FALSE(q.args.has("beam"));
  CHECK(q.args.positional() == (std::vector<std::string>{"-"}));
}

TEST_CASE("cli/arguments: after -- every argument is positional") {
  Parsed p = parse({"--model", "m.emt", "--", "-x", "--beam", "--"});
  REQUIRE_MESSAGE(p.ok, p.error);
  CHECK_FALSE(p.args.has("beam"));
  CHECK(p.args.positional() == (std::vector<std::string>{"-x", "--beam", "--"}));
}

TEST_CASE("cli/arguments: parse errors name the flag") {
  struct Case {
    std::vector<std::string> words;
    const char* message;
  };
  const Case cases[] = {
      {{"--nope", "1"}, "unknown option '--nope'"},
      {{"--nope=1"}, "unknown option '--nope'"},
      {{"-z"}, "unknown option '-z'"},
      {{"--model"}, "option '--model' needs a value"},
      {{"in.txt", "-m"}, "option '--model' needs a value"},
      {{"--quiet=yes"}, "option '--quiet' takes no value"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.message);
    Parsed p = parse(c.words);
    CHECK_FALSE(p.ok);
    CHECK(p.error == c.message);
  }
}

TEST_CASE("cli/arguments: get_size accepts whole numbers in range only") {
  struct Case {
    const char* text;
    bool ok;
    size_t value;
  };
  const Case cases[] = {
      {"1", true, 1},     {"16", true, 16},   {"007", true, 7},  {"0", false, 0},
      {"17", false, 0},   {"-1", false, 0},   {"", false, 0},    {"4x", false, 0},
      {"2.5", false, 0},  {"1e1", false, 0},  {"99999999999999999999999", false, 0},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.text));
    Parsed p = parse({std::string("--beam=") + c.text});
    REQUIRE(p.ok);
    size_t out = 12345;
    std::string error;
    const bool ok = p.args.get_size("beam", 4, 1, 16, &out, &error);
    CHECK(ok == c.ok);
    if (c.ok) {
      CHECK(out == c.value);
      CHECK(error.empty());
    } else {
      CHECK(out == 12345);  // untouched on error
      CHECK(error == "option '--beam' wants a whole number in [1, 16], got '" +
                         std::string(c.text) + "'");
    }
  }
}

TEST_CASE("cli/arguments: get_float accepts finite numbers only") {
  struct Case {
    const char* text;
    bool ok;
    float value;
  };
  const Case cases[] = {
      {"0.6", true, 0.6f}, {"1", true, 1.0f},     {"-2.5", true, -2.5f}, {"1e-3", true, 1e-3f},
      {"", false, 0.0f},   {"abc", false, 0.0f},  {"1.0x", false, 0.0f}, {"nan", false, 0.0f},
      {"inf", false, 0.0f}, {"1e99", false, 0.0f},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.text));
    Parsed p = parse({"--alpha", c.text});
    REQUIRE(p.ok);
    float out = 42.0f;
    std::string error;
    const bool ok = p.args.get_float("alpha", 0.0f, &out, &error);
    CHECK(ok == c.ok);
    if (c.ok) {
      CHECK(out == c.value);
    } else {
      CHECK(out == 42.0f);
      CHECK(error == "option '--alpha' wants a number, got '" + std::string(c.text) + "'");
    }
  }
}

}  // namespace
}  // namespace edgemt::cli
