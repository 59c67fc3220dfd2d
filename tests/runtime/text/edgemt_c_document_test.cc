// The C API's document part (runtime/text/edgemt_c_document.cc): sentence
// splitting and edgemt_translate_document on the bundled int8 model, held to
// edgemt_translate_text of each sentence on its own (what a split line must
// equal) and to the word numbering of the whole line. Line for line against
// the CLI: tests/runtime/python/test_edgemt_documents.py.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "edgemt/edgemt.h"

namespace {

struct Fixture {
  edgemt_model* model = nullptr;
  edgemt_tokenizer* tokenizer = nullptr;
  edgemt_translator* translator = nullptr;
  edgemt_error error;

  explicit Fixture(bool attention = false, size_t max_batch = 4) {
    REQUIRE(edgemt_model_open(EDGEMT_BUNDLED_MODEL, &model, &error) == EDGEMT_OK);
    REQUIRE(edgemt_tokenizer_create(model, &tokenizer, &error) == EDGEMT_OK);
    REQUIRE(edgemt_translator_create(model, nullptr, &translator, &error) == EDGEMT_OK);
    edgemt_limits limits = edgemt_limits_default();
    limits.max_batch = max_batch;
    limits.attention = attention ? 1 : 0;
    REQUIRE(edgemt_translator_prepare(translator, &limits, nullptr, 0, &error) == EDGEMT_OK);
  }
  ~Fixture() {
    edgemt_translator_free(translator);
    edgemt_tokenizer_free(tokenizer);
    edgemt_model_free(model);
  }
};

// Memory for one document result.
struct Slot {
  std::vector<char> text = std::vector<char>(4096);
  std::vector<int32_t> tokens = std::vector<int32_t>(1024);
  std::vector<edgemt_word_pair> pairs = std::vector<edgemt_word_pair>(256);
  edgemt_document_result result{};

  Slot() {
    result.translation.text = text.data();
    result.translation.text_capacity = text.size();
    result.translation.tokens = tokens.data();
    result.translation.token_capacity = tokens.size();
    result.alignment = pairs.data();
    result.alignment_capacity = pairs.size();
  }
  std::string str() const { return std::string(result.translation.text, result.translation.text_length); }
};

edgemt_code translate(Fixture& f, const std::vector<std::string>& lines, std::vector<Slot>* slots,
                      const edgemt_document_options* options = nullptr) {
  std::vector<edgemt_text> texts;
  for (const std::string& line : lines) texts.push_back(edgemt_text{line.data(), line.size()});
  slots->resize(lines.size());
  std::vector<edgemt_document_result> results;
  for (Slot& slot : *slots) results.push_back(slot.result);
  const edgemt_code code = edgemt_translate_document(f.translator, f.tokenizer, texts.data(),
                                                     texts.size(), options, nullptr,
                                                     results.data(), &f.error);
  for (size_t i = 0; i < slots->size(); ++i) (*slots)[i].result = results[i];
  return code;
}

// edgemt_translate_text of one text: its translation, tokens and score.
struct Single {
  std::string text;
  std::vector<int32_t> tokens;
  float score = 0.0f;
};

Single translate_one(Fixture& f, const std::string& sentence) {
  char text[4096];
  int32_t tokens[512];
  edgemt_text input{sentence.data(), sentence.size()};
  edgemt_text_result r{};
  r.text = text;
  r.text_capacity = sizeof(text);
  r.tokens = tokens;
  r.token_capacity = 512;
  REQUIRE(edgemt_translate_text(f.translator, f.tokenizer, &input, 1, nullptr, nullptr, &r,
                                &f.error) == EDGEMT_OK);
  REQUIRE(r.code == EDGEMT_OK);
  return Single{std::string(text, r.text_length), std::vector<int32_t>(tokens, tokens + r.token_length),
                r.score};
}

size_t words(const std::string& text) {
  size_t count = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool space = text[i] == ' ' || text[i] == '\t';
    const bool before = i > 0 && !(text[i - 1] == ' ' || text[i - 1] == '\t');
    if (!space && !before) ++count;
  }
  return count;
}

}  // namespace

TEST_CASE("capi/document: split_sentences gives byte spans without the spaces around") {
  const std::string text = "  Two dogs play.   A cat sleeps!\tThe end.";
  edgemt_span spans[4];
  size_t count = 0;
  edgemt_error error;
  REQUIRE(edgemt_split_sentences(text.data(), text.size(), "en", spans, 4, &count, &error) == EDGEMT_OK);
  REQUIRE(count == 3);
  CHECK(text.substr(spans[0].begin, spans[0].end - spans[0].begin) == "Two dogs play.");
  CHECK(text.substr(spans[1].begin, spans[1].end - spans[1].begin) == "A cat sleeps!");
  CHECK(text.substr(spans[2].begin, spans[2].end - spans[2].begin) == "The end.");
  // Too small: OUT_OF_RANGE, the count needed, the first spans written.
  edgemt_span one[1];
  CHECK(edgemt_split_sentences(text.data(), text.size(), nullptr, one, 1, &count, &error) ==
        EDGEMT_OUT_OF_RANGE);
  CHECK(count == 3);
  CHECK(one[0].begin == spans[0].begin);
  // Blank: none; bytes that are not UTF-8 are only non-letters.
  CHECK(edgemt_split_sentences("  ", 2, "", spans, 4, &count, &error) == EDGEMT_OK);
  CHECK(count == 0);
  const char bad[] = "A\xff\xfe. B\xc3.";
  CHECK(edgemt_split_sentences(bad, sizeof(bad) - 1, "de", spans, 4, &count, &error) == EDGEMT_OK);
  CHECK(count == 2);
  CHECK(edgemt_split_sentences(nullptr, 3, "en", spans, 4, &count, &error) == EDGEMT_INVALID_ARGUMENT);
  CHECK(edgemt_split_sentences(text.data(), text.size(), "en", spans, 4, nullptr, &error) ==
        EDGEMT_INVALID_ARGUMENT);
}

TEST_CASE("capi/document: a split line is its sentences translated alone and joined") {
  Fixture f(false, 3);  // 7 sentences: three calls of max_batch 3
  const std::vector<std::string> lines = {"Two dogs play. A cat sleeps.",
                                          "A man rides a bike.  Two women talk!\tA boy runs.",
                                          "   ", "A girl smiles.",
                                          "Dogs run. Cats sit."};
  std::vector<Slot> slots;
  REQUIRE(translate(f, lines, &slots) == EDGEMT_OK);
  const std::vector<std::vector<std::string>> sentences = {
      {"Two dogs play.", "A cat sleeps."},
      {"A man rides a bike.", "Two women talk!", "A boy runs."},
      {},
      {"A girl smiles."},
      {"Dogs run.", "Cats sit."}};
  const std::vector<std::vector<std::string>> gaps = {{" "}, {"  ", "\t"}, {}, {}, {" "}};
  for (size_t i = 0; i < lines.size(); ++i) {
    CAPTURE(lines[i]);
    const edgemt_document_result& d = slots[i].result;
    const edgemt_text_result& r = d.translation;
    REQUIRE(r.code == EDGEMT_OK);
    CHECK(d.sentence_count == sentences[i].size());
    std::string joined;
    std::vector<int32_t> tokens;
    double score = 0.0;
    for (size_t k = 0; k < sentences[i].size(); ++k) {
      const Single one = translate_one(f, sentences[i][k]);
      joined += (k > 0 ? gaps[i][k - 1] : "") + one.text;
      tokens.insert(tokens.end(), one.tokens.begin(), one.tokens.end());
      score += static_cast<double>(one.score);
    }
    CHECK(slots[i].str() == joined);
    CHECK(std::vector<int32_t>(r.tokens, r.tokens + r.token_length) == tokens);
    CHECK(std::fabs(static_cast<double>(r.score) - score) < 1e-4);
    CHECK(d.alignment_length == 0);  // not asked
  }
  // Without splitting a line is one source: edgemt_translate_text's result.
  edgemt_document_options whole = edgemt_document_options_default();
  whole.split_sentences = 0;
  REQUIRE(translate(f, {lines[1]}, &slots, &whole) == EDGEMT_OK);
  CHECK(slots[0].result.sentence_count == 1);
  CHECK(slots[0].str() == translate_one(f, lines[1]).text);
}

TEST_CASE("capi/document: alignments number the whole line's words") {
  Fixture f(true);
  edgemt_document_options align = edgemt_document_options_default();
  align.align = 1;
  const std::string first = "Two dogs play.";
  const std::string second = "A cat sleeps on a red sofa.";
  std::vector<Slot> slots;
  REQUIRE(translate(f, {first + " " + second, first, second}, &slots, &align) == EDGEMT_OK);
  const edgemt_document_result& line = slots[0].result;
  const edgemt_document_result& a = slots[1].result;
  const edgemt_document_result& b = slots[2].result;
  REQUIRE(line.translation.code == EDGEMT_OK);
  REQUIRE(a.translation.code == EDGEMT_OK);
  REQUIRE(b.translation.code == EDGEMT_OK);
  // One link per target word, sorted by target word.
  CHECK(a.alignment_length == words(slots[1].str()));
  CHECK(b.alignment_length == words(slots[2].str()));
  REQUIRE(line.alignment_length == a.alignment_length + b.alignment_length);
  // The second sentence's links, shifted by the first one's word counts.
  const size_t source_shift = words(first);
  const size_t target_shift = words(slots[1].str());
  for (size_t i = 0; i < a.alignment_length; ++i) {
    CHECK(line.alignment[i].source_word == a.alignment[i].source_word);
    CHECK(line.alignment[i].target_word == a.alignment[i].target_word);
  }
  for (size_t i = 0; i < b.alignment_length; ++i) {
    const edgemt_word_pair& got = line.alignment[a.alignment_length + i];
    CHECK(got.source_word == b.alignment[i].source_word + source_shift);
    CHECK(got.target_word == b.alignment[i].target_word + target_shift);
  }
  // Too little room: that line alone fails, saying how many it needs.
  Slot small;
  small.result.alignment_capacity = 2;
  std::vector<Slot> one = {small};
  const std::string text = first + " " + second;
  edgemt_text input{text.data(), text.size()};
  REQUIRE(edgemt_translate_document(f.translator, f.tokenizer, &input, 1, &align, nullptr,
                                    &one[0].result, &f.error) == EDGEMT_OK);
  CHECK(one[0].result.translation.code == EDGEMT_OUT_OF_RANGE);
  CHECK(one[0].result.alignment_length == line.alignment_length);
}

TEST_CASE("capi/document: a sentence over max_source_len is cut into pieces that fit") {
  Fixture f;
  std::string long_line;
  for (int k = 0; k < 200; ++k) long_line += "dog cat bird, ";  // > max_source_len tokens
  std::vector<Slot> slots;
  REQUIRE(translate(f, {long_line}, &slots) == EDGEMT_OK);
  REQUIRE(slots[0].result.translation.code == EDGEMT_OK);
  CHECK(slots[0].result.sentence_count > 1);
  CHECK_FALSE(slots[0].str().empty());
}

TEST_CASE("capi/document: a line that cannot be translated fails alone") {
  Fixture f;
  std::string long_line;
  for (int k = 0; k < 200; ++k) long_line += "dog cat bird ";  // > max_source_len tokens
  std::vector<Slot> slots;
  // Whole lines: the long one cannot be cut.
  edgemt_document_options whole = edgemt_document_options_default();
  whole.split_sentences = 0;
  REQUIRE(translate(f, {"A dog runs.", long_line, "A cat sleeps."}, &slots, &whole) == EDGEMT_OK);
  CHECK(slots[0].result.translation.code == EDGEMT_OK);
  CHECK(slots[1].result.translation.code == EDGEMT_OUT_OF_RANGE);
  CHECK(std::string(slots[1].result.translation.error).find("max_source_len") != std::string::npos);
  CHECK(slots[1].str().empty());
  CHECK(slots[2].result.translation.code == EDGEMT_OK);
  CHECK(slots[2].str() == translate_one(f, "A cat sleeps.").text);
  // Invalid UTF-8: that line, with a message.
  REQUIRE(translate(f, {"A dog\xff runs."}, &slots) == EDGEMT_OK);
  CHECK(slots[0].result.translation.code == EDGEMT_INVALID_ARGUMENT);
  CHECK(std::string(slots[0].result.translation.error).find("UTF-8") != std::string::npos);
}

TEST_CASE("capi/document: the whole call refuses what cannot work") {
  Fixture f;
  std::vector<Slot> slots;
  edgemt_document_options align = edgemt_document_options_default();
  align.align = 1;
  CHECK(translate(f, {"A dog."}, &slots, &align) == EDGEMT_FAILED_PRECONDITION);
  CHECK(std::string(f.error.message).find("limits.attention") != std::string::npos);
  edgemt_document_options prefix = edgemt_document_options_default();
  prefix.target_prefix = "xx";
  CHECK(translate(f, {"A dog."}, &slots, &prefix) == EDGEMT_INVALID_ARGUMENT);
  edgemt_text text{"A dog.", 6};
  edgemt_document_result no_memory{};
  CHECK(edgemt_translate_document(f.translator, f.tokenizer, &text, 1, nullptr, nullptr,
                                  &no_memory, &f.error) == EDGEMT_INVALID_ARGUMENT);
  CHECK(edgemt_translate_document(nullptr, f.tokenizer, &text, 1, nullptr, nullptr, &no_memory,
                                  &f.error) == EDGEMT_INVALID_ARGUMENT);
}
