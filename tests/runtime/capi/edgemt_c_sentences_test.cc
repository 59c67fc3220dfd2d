// The C API's per-sentence view of a document (edgemt_translate_document_
// sentences) and the pieces of ids (edgemt_tokenizer_piece) on the bundled
// int8 model: what the Python module's Translation.sentences, .pieces and
// text attention are made of (tests/runtime/python/test_edgemt_results.py).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "edgemt/edgemt.h"

namespace {

struct Setup {
  edgemt_model* model = nullptr;
  edgemt_tokenizer* tokenizer = nullptr;
  edgemt_translator* translator = nullptr;
  edgemt_error error;

  explicit Setup(bool attention) {
    REQUIRE(edgemt_model_open(EDGEMT_BUNDLED_MODEL, &model, &error) == EDGEMT_OK);
    REQUIRE(edgemt_tokenizer_create(model, &tokenizer, &error) == EDGEMT_OK);
    REQUIRE(edgemt_translator_create(model, nullptr, &translator, &error) == EDGEMT_OK);
    edgemt_limits limits = edgemt_limits_default();
    limits.attention = attention ? 1 : 0;
    REQUIRE(edgemt_translator_prepare(translator, &limits, nullptr, 0, &error) == EDGEMT_OK);
  }
  ~Setup() {
    edgemt_translator_free(translator);
    edgemt_tokenizer_free(tokenizer);
    edgemt_model_free(model);
  }
};

// A copy of what the callback is handed (its pointers die with the call).
struct Copied {
  size_t line, index, begin, end;
  std::vector<int32_t> source, tokens;
  std::string translation;
  std::vector<float> attention;
  size_t rows, columns;
};

void keep(void* user, const edgemt_document_sentence* s) {
  Copied c{s->line, s->index, s->span.begin, s->span.end, {}, {}, {}, {}, s->attention_rows,
           s->attention_columns};
  c.source.assign(s->source, s->source + s->source_length);
  c.tokens.assign(s->tokens, s->tokens + s->token_length);
  c.translation.assign(s->translation, s->translation_length);
  if (s->attention != nullptr) {
    c.attention.assign(s->attention, s->attention + s->attention_rows * s->attention_columns);
  }
  static_cast<std::vector<Copied>*>(user)->push_back(c);
}

struct Slots {
  std::vector<std::vector<char>> text;
  std::vector<std::vector<int32_t>> tokens;
  std::vector<edgemt_document_result> results;
  explicit Slots(size_t n) : text(n, std::vector<char>(4096)), tokens(n, std::vector<int32_t>(1024)),
                             results(n) {
    for (size_t i = 0; i < n; ++i) {
      results[i] = edgemt_document_result{};
      results[i].translation.text = text[i].data();
      results[i].translation.text_capacity = text[i].size();
      results[i].translation.tokens = tokens[i].data();
      results[i].translation.token_capacity = tokens[i].size();
    }
  }
};

std::string piece(const edgemt_tokenizer* tokenizer, int side, int32_t id) {
  char text[64];
  size_t length = 0;
  edgemt_error error;
  REQUIRE_MESSAGE(edgemt_tokenizer_piece(tokenizer, side, id, text, sizeof(text), &length, &error) ==
                      EDGEMT_OK,
                  error.message);
  return std::string(text, length);
}

}  // namespace

TEST_CASE("capi/document sentences: each sentence of the lines that succeeded, with attention") {
  Setup s(true);
  const std::string long_line(3000, 'a');
  const std::vector<std::string> lines = {"Two dogs play. A cat sleeps.", "  ",
                                          "a " + long_line + " b", "A man."};
  std::vector<edgemt_text> texts;
  for (const std::string& line : lines) texts.push_back(edgemt_text{line.data(), line.size()});
  Slots slots(lines.size());
  std::vector<Copied> got;
  REQUIRE_MESSAGE(edgemt_translate_document_sentences(s.translator, s.tokenizer, texts.data(),
                                                      texts.size(), nullptr, nullptr,
                                                      slots.results.data(), 1, keep, &got,
                                                      &s.error) == EDGEMT_OK,
                  s.error.message);
  CHECK(slots.results[2].translation.code == EDGEMT_OUT_OF_RANGE);
  REQUIRE(got.size() == 3);  // two sentences of line 0, one of line 3; none of 1 and 2
  CHECK((got[0].line == 0 && got[0].index == 0 && got[1].line == 0 && got[1].index == 1));
  CHECK((got[2].line == 3 && got[2].index == 0));
  CHECK(lines[0].substr(got[1].begin, got[1].end - got[1].begin) == "A cat sleeps.");
  // The line's tokens are its sentences' tokens; its text joins theirs.
  std::vector<int32_t> joined = got[0].tokens;
  joined.insert(joined.end(), got[1].tokens.begin(), got[1].tokens.end());
  const edgemt_text_result& first = slots.results[0].translation;
  CHECK(std::vector<int32_t>(first.tokens, first.tokens + first.token_length) == joined);
  CHECK(std::string(first.text, first.text_length) == got[0].translation + " " + got[1].translation);
  for (const Copied& c : got) {
    CHECK(c.columns == c.source.size());
    CHECK((c.rows == c.tokens.size() || c.rows == c.tokens.size() + 1));
    for (size_t r = 0; r < c.rows; ++r) {
      float sum = 0.0f;
      for (size_t k = 0; k < c.columns; ++k) sum += c.attention[r * c.columns + k];
      CHECK(std::fabs(sum - 1.0f) < 1e-3f);
    }
  }

  // Without attention: the same sentences, no weights; NULL callback: as
  // edgemt_translate_document.
  std::vector<Copied> plain;
  Slots again(lines.size());
  REQUIRE(edgemt_translate_document_sentences(s.translator, s.tokenizer, texts.data(), texts.size(),
                                              nullptr, nullptr, again.results.data(), 0, keep,
                                              &plain, &s.error) == EDGEMT_OK);
  REQUIRE(plain.size() == got.size());
  CHECK(plain[0].tokens == got[0].tokens);
  CHECK((plain[0].attention.empty() && plain[0].rows == 0));
  CHECK(edgemt_translate_document_sentences(s.translator, s.tokenizer, texts.data(), texts.size(),
                                            nullptr, nullptr, again.results.data(), 0, nullptr,
                                            nullptr, &s.error) == EDGEMT_OK);
}

TEST_CASE("capi/document sentences: attention needs a translator prepared for it") {
  Setup s(false);
  const std::string line = "A dog.";
  const edgemt_text text{line.data(), line.size()};
  Slots slots(1);
  std::vector<Copied> got;
  CHECK(edgemt_translate_document_sentences(s.translator, s.tokenizer, &text, 1, nullptr, nullptr,
                                            slots.results.data(), 1, keep, &got,
                                            &s.error) == EDGEMT_FAILED_PRECONDITION);
  CHECK(std::strstr(s.error.message, "limits.attention") != nullptr);
  CHECK(got.empty());
}

TEST_CASE("capi/tokenizer_piece: the pieces of both sides, and bad requests") {
  Setup s(false);
  std::vector<int32_t> ids(64);
  size_t count = 0;
  const std::string text = "A dog runs.";
  REQUIRE(edgemt_tokenizer_encode(s.tokenizer, text.data(), text.size(), ids.data(), ids.size(),
                                  &count, &s.error) == EDGEMT_OK);
  std::string pieces;
  for (size_t i = 0; i + 1 < count; ++i) pieces += piece(s.tokenizer, 0, ids[i]);
  CHECK(pieces == "\xe2\x96\x81" "A" "\xe2\x96\x81" "dog" "\xe2\x96\x81" "runs.");
  CHECK(piece(s.tokenizer, 0, ids[count - 1]) == "</s>");
  CHECK(piece(s.tokenizer, 1, ids[1]) == piece(s.tokenizer, 0, ids[1]));  // one shared vocabulary

  char small[2];
  size_t length = 0;
  CHECK(edgemt_tokenizer_piece(s.tokenizer, 0, ids[1], small, sizeof(small), &length, &s.error) ==
        EDGEMT_OUT_OF_RANGE);
  CHECK(length == piece(s.tokenizer, 0, ids[1]).size());
  CHECK(small[0] == '\0');
  CHECK(edgemt_tokenizer_piece(s.tokenizer, 2, 5, small, sizeof(small), &length, &s.error) ==
        EDGEMT_INVALID_ARGUMENT);
  CHECK(edgemt_tokenizer_piece(s.tokenizer, 0, -1, small, sizeof(small), &length, &s.error) ==
        EDGEMT_INVALID_ARGUMENT);
  CHECK(edgemt_tokenizer_piece(s.tokenizer, 1, 1 << 30, small, sizeof(small), &length, &s.error) ==
        EDGEMT_INVALID_ARGUMENT);
  CHECK(edgemt_tokenizer_piece(nullptr, 0, 5, small, sizeof(small), &length, &s.error) ==
        EDGEMT_INVALID_ARGUMENT);
}
