// The C API's text part (runtime/text/edgemt_c_text.cc): tokenizer and
// translate_text on the bundled int8 model, against the reference files.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "edgemt/edgemt.h"

namespace {

std::vector<std::string> reference_lines(const char* name, size_t count) {
  std::vector<std::string> lines;
  std::ifstream in(std::string(EDGEMT_SOURCE_DIR "/models/reference/") + name);
  std::string line;
  while (lines.size() < count && std::getline(in, line)) lines.push_back(line);
  return lines;
}

struct Fixture {
  edgemt_model* model = nullptr;
  edgemt_tokenizer* tokenizer = nullptr;
  edgemt_translator* translator = nullptr;
  edgemt_error error;

  explicit Fixture(bool prepare = true) {
    REQUIRE(edgemt_model_open(EDGEMT_BUNDLED_MODEL, &model, &error) == EDGEMT_OK);
    REQUIRE(edgemt_tokenizer_create(model, &tokenizer, &error) == EDGEMT_OK);
    REQUIRE(edgemt_translator_create(model, nullptr, &translator, &error) == EDGEMT_OK);
    if (prepare) {
      const edgemt_limits limits = edgemt_limits_default();
      REQUIRE(edgemt_translator_prepare(translator, &limits, nullptr, 0, &error) == EDGEMT_OK);
    }
  }
  ~Fixture() {
    edgemt_translator_free(translator);
    edgemt_tokenizer_free(tokenizer);
    edgemt_model_free(model);
  }
};

}  // namespace

TEST_CASE("capi/text: encode gives the reference ids, decode the text") {
  Fixture f;
  const auto sources = reference_lines("test_2016_flickr.en", 20);
  const auto ids = reference_lines("test_2016_flickr.en.ids", 20);
  for (size_t i = 0; i < sources.size(); ++i) {
    int32_t encoded[512];
    size_t length = 0;
    REQUIRE(edgemt_tokenizer_encode(f.tokenizer, sources[i].data(), sources[i].size(), encoded,
                                    512, &length, &f.error) == EDGEMT_OK);
    std::ostringstream joined;
    for (size_t k = 0; k < length; ++k) joined << (k ? " " : "") << encoded[k];
    CHECK(joined.str() == ids[i]);
  }
  // Too small: OUT_OF_RANGE with the count needed.
  int32_t two[2];
  size_t needed = 0;
  CHECK(edgemt_tokenizer_encode(f.tokenizer, sources[0].data(), sources[0].size(), two, 2, &needed,
                                &f.error) == EDGEMT_OUT_OF_RANGE);
  CHECK(needed > 2);
  // Invalid UTF-8.
  const char bad[] = "caf\xc3";
  size_t length = 0;
  int32_t ids_out[16];
  CHECK(edgemt_tokenizer_encode(f.tokenizer, bad, 4, ids_out, 16, &length, &f.error) ==
        EDGEMT_INVALID_ARGUMENT);
  CHECK(std::strlen(f.error.message) > 0);
  // Decode, and a buffer too small for it.
  const int32_t some[] = {9, 21, 6, 29, 3};
  char text[128];
  REQUIRE(edgemt_tokenizer_decode(f.tokenizer, some, 5, text, sizeof(text), &length, &f.error) ==
          EDGEMT_OK);
  CHECK(std::strlen(text) == length);
  char tiny[3];
  CHECK(edgemt_tokenizer_decode(f.tokenizer, some, 5, tiny, sizeof(tiny), &length, &f.error) ==
        EDGEMT_OUT_OF_RANGE);
  CHECK(length > 2);
}

TEST_CASE("capi/text: translate_text gives the reference translations") {
  Fixture f;
  const size_t count = 16;
  const auto sources = reference_lines("test_2016_flickr.en", count);
  const auto expected = reference_lines("edgemt_int8_greedy.de", count);
  std::vector<edgemt_text> texts(count + 1);
  for (size_t i = 0; i < count; ++i) texts[i] = {sources[i].data(), sources[i].size()};
  texts[count] = {"  \t", 3};  // blank: "" without translating
  std::vector<std::vector<char>> buffers(count + 1, std::vector<char>(1024));
  std::vector<std::vector<int32_t>> tokens(count + 1, std::vector<int32_t>(256));
  std::vector<edgemt_text_result> results(count + 1);
  for (size_t i = 0; i <= count; ++i) {
    results[i].text = buffers[i].data();
    results[i].text_capacity = buffers[i].size();
    results[i].tokens = tokens[i].data();
    results[i].token_capacity = tokens[i].size();
  }
  edgemt_decode_options greedy;
  REQUIRE(edgemt_decode_options_default(f.model, &greedy, &f.error) == EDGEMT_OK);
  greedy.beam_size = 1;
  // The default limits take 16 sentences; 17 texts with one blank fit.
  REQUIRE_MESSAGE(edgemt_translate_text(f.translator, f.tokenizer, texts.data(), count + 1,
                                        nullptr, &greedy, results.data(), &f.error) == EDGEMT_OK,
                  f.error.message);
  for (size_t i = 0; i < count; ++i) {
    CHECK(results[i].code == EDGEMT_OK);
    CHECK(std::string(results[i].text, results[i].text_length) == expected[i]);
    CHECK(results[i].token_length > 0);
    CHECK(results[i].score < 0.0f);
  }
  CHECK(results[count].code == EDGEMT_OK);
  CHECK(std::string(results[count].text).empty());

  SUBCASE("a text buffer too small: that sentence says OUT_OF_RANGE and the length needed") {
    char small[4];
    edgemt_text_result r = {};
    r.text = small;
    r.text_capacity = sizeof(small);
    REQUIRE(edgemt_translate_text(f.translator, f.tokenizer, texts.data(), 1, nullptr, &greedy,
                                  &r, &f.error) == EDGEMT_OK);
    CHECK(r.code == EDGEMT_OUT_OF_RANGE);
    CHECK(r.text_length == expected[0].size());
    CHECK(std::string(small).empty());
  }
  SUBCASE("a target prefix the model does not have") {
    CHECK(edgemt_translate_text(f.translator, f.tokenizer, texts.data(), 1, "fra", &greedy,
                                results.data(), &f.error) == EDGEMT_INVALID_ARGUMENT);
    CHECK(std::string(f.error.message).find(">>fra<<") != std::string::npos);
  }
  SUBCASE("invalid UTF-8 fails the call and names the text") {
    std::vector<edgemt_text> with_bad = {texts[0], {"\xff\xfe", 2}};
    CHECK(edgemt_translate_text(f.translator, f.tokenizer, with_bad.data(), 2, nullptr, &greedy,
                                results.data(), &f.error) == EDGEMT_INVALID_ARGUMENT);
    CHECK(std::string(f.error.message).find("text 1") != std::string::npos);
  }
}

TEST_CASE("capi/text: translate_text before prepare") {
  Fixture f(/*prepare=*/false);
  const std::string source = "A man is riding a bike.";
  const edgemt_text text = {source.data(), source.size()};
  char buffer[256];
  edgemt_text_result r = {};
  r.text = buffer;
  r.text_capacity = sizeof(buffer);
  CHECK(edgemt_translate_text(f.translator, f.tokenizer, &text, 1, nullptr, nullptr, &r,
                              &f.error) == EDGEMT_FAILED_PRECONDITION);
  CHECK(edgemt_tokenizer_create(nullptr, nullptr, &f.error) == EDGEMT_INVALID_ARGUMENT);
}
