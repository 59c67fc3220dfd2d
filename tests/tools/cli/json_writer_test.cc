// cli::JsonWriter: commas and colons, escaping of quotes, backslashes and
// control characters, UTF-8 kept as it is and bytes that are not UTF-8 as
// U+FFFD (the output must parse whatever a translation holds), and numbers
// (non-finite ones as null). Built into edgemt_cli_tests with
// tools/cli/json_writer.cc (tests/CMakeLists.txt).
#include "cli/json_writer.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

namespace edgemt::cli {
namespace {

std::string quoted(const std::string& text) {
  std::string out;
  append_json_string(text, &out);
  return out;
}

TEST_CASE("cli/json_writer: nested objects and arrays get commas and colons") {
  JsonWriter json;
  json.begin_object()
      .key("line").value(uint64_t{3})
      .key("tokens").begin_array().value("a").value("b").end_array()
      .key("pairs").begin_array()
      .begin_array().value(uint64_t{0}).value(uint64_t{1}).end_array()
      .begin_array().value(uint64_t{2}).value(uint64_t{3}).end_array()
      .end_array()
      .key("empty").begin_array().end_array()
      .key("ok").value(true)
      .key("none").null()
      .end_object();
  CHECK(json.text() ==
        R"({"line":3,"tokens":["a","b"],"pairs":[[0,1],[2,3]],"empty":[],"ok":true,"none":null})");
}

TEST_CASE("cli/json_writer: quotes, backslashes and control characters are escaped") {
  CHECK(quoted("say \"hi\"") == R"("say \"hi\"")");
  CHECK(quoted("a\\b") == R"("a\\b")");
  CHECK(quoted("tab\there\nnew\rret") == R"("tab\there\nnew\rret")");
  CHECK(quoted(std::string("nul\0x", 5)) == R"("nul\u0000x")");
  CHECK(quoted("\x01\x1f\x7f") == R"("\u0001\u001f\u007f")");
  CHECK(quoted("\b\f") == R"("\b\f")");
  CHECK(quoted("/") == R"("/")");
}

TEST_CASE("cli/json_writer: UTF-8 is kept, malformed bytes become U+FFFD") {
  CHECK(quoted("Mädchen ▁Ein 日本 😀") == "\"Mädchen ▁Ein 日本 😀\"");
  CHECK(quoted("\xff") == "\"\xEF\xBF\xBD\"");
  CHECK(quoted("a\xc3") == "\"a\xEF\xBF\xBD\"");            // cut sequence at the end
  CHECK(quoted("\xc3(") == "\"\xEF\xBF\xBD(\"");            // bad continuation
  CHECK(quoted("\xc0\xaf") == "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");  // overlong '/'
  CHECK(quoted("\xed\xa0\x80") == "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // a surrogate
}

TEST_CASE("cli/json_writer: numbers, and null for what JSON cannot hold") {
  JsonWriter json;
  json.begin_array()
      .value(-0.5)
      .value(3.0)
      .value(1e-5)
      .value(std::numeric_limits<double>::quiet_NaN())
      .value(std::numeric_limits<double>::infinity())
      .value(uint64_t{18446744073709551615u})
      .end_array();
  CHECK(json.text() == "[-0.5,3,1e-05,null,null,18446744073709551615]");
}

}  // namespace
}  // namespace edgemt::cli
