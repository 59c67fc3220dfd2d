// Consumer of the installed C++ API (tests/install/CMakeLists.txt): static
// edgemt::core + edgemt::text through find_package(edgemt).
//
//   translate MODEL SENTENCE   prints the greedy translation of SENTENCE
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "edgemt/model.h"
#include "edgemt/tokenizer.h"
#include "edgemt/translator.h"

namespace {

int fail(const char* what, const edgemt::Status& status) {
  std::fprintf(stderr, "translate: %s: %s\n", what, status.message());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: translate MODEL SENTENCE\n");
    return 2;
  }
  std::unique_ptr<edgemt::Model> model;
  edgemt::Status status = edgemt::Model::load(argv[1], &model);
  if (!status.is_ok()) return fail("model", status);
  std::unique_ptr<edgemt::Tokenizer> tokenizer;
  status = edgemt::Tokenizer::create(*model, &tokenizer);
  if (!status.is_ok()) return fail("tokenizer", status);
  std::unique_ptr<edgemt::Translator> translator;
  status = edgemt::Translator::create(*model, edgemt::TranslatorOptions(), &translator);
  if (!status.is_ok()) return fail("translator", status);
  edgemt::Limits limits;
  limits.max_batch = 1;
  limits.max_beam = 1;
  status = translator->prepare(limits);
  if (!status.is_ok()) return fail("prepare", status);

  std::vector<int32_t> source;
  status = tokenizer->encode(argv[2], &source);
  if (!status.is_ok()) return fail("encode", status);
  std::vector<int32_t> target(limits.max_target_len);
  edgemt::TokenSpan span;
  span.ids = source.data();
  span.length = source.size();
  edgemt::Translation result;
  result.tokens = target.data();
  result.capacity = target.size();
  edgemt::DecodeOptions decode = edgemt::decode_options(*model);
  decode.beam_size = 1;
  status = translator->translate(&span, 1, decode, &result);
  if (!status.is_ok()) return fail("translate", status);
  if (result.status != edgemt::StatusCode::kOk) {
    std::fprintf(stderr, "translate: %s\n", result.error);
    return 1;
  }
  std::string text;
  status = tokenizer->decode(result.tokens, result.length, &text);
  if (!status.is_ok()) return fail("decode", status);
  std::printf("%s\n", text.c_str());
  return 0;
}
