// Fuzz target: the text path of `edgemt translate`, on the bundled model.
//
// Arbitrary bytes (invalid UTF-8, NUL and control characters, lines of any
// length; run with -max_len=1048576 so that lines past the limit occur) go
// through the CLI's LineReader with a small line limit, then, line by line,
// Tokenizer::encode; the first lines that encode go through one batched
// Translator::translate (greedy or beam 2, 4 tokens at most: translating is
// the slow part, and the translate fuzzer covers it in depth) and
// Tokenizer::decode.
//
// Properties checked (a violation aborts):
//   - LineReader gives back exactly the input: the kept lines joined with
//     '\n' and the lengths of the skipped ones account for every byte;
//   - encode succeeds, or refuses with kInvalidArgument (not UTF-8) or
//     kOutOfRange (too long); its ids are inside the vocabulary;
//   - translate succeeds for the lines that fit, every result ok or a
//     per-sentence kNumericError; decode of its ids succeeds;
//   - arbitrary id sequences (from the input) decode or fail cleanly;
//   - split_sentences (each language's rules) gives non-empty spans in
//     order inside the line with only whitespace between them, and joining
//     the sentences' own texts gives the line back without the whitespace
//     around it.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli/line_reader.h"
#include "edgemt/model.h"
#include "edgemt/sentences.h"
#include "edgemt/tokenizer.h"
#include "edgemt/translator.h"
#include "fuzz_check.h"
#include "models/families.h"

namespace {

constexpr size_t kMaxLineBytes = 4096;
constexpr size_t kBatch = 4;
// Lines tokenized per input: LineReader sees all of a 1 MB input, but
// SentencePiece (~1 MB/s here) only its first lines, to keep inputs fast.
constexpr size_t kMaxEncodedLines = 16;

struct Engine {
  std::unique_ptr<edgemt::Model> model;
  std::unique_ptr<edgemt::Tokenizer> tokenizer;
  std::unique_ptr<edgemt::Translator> translator;
};
Engine* g_engine = nullptr;

void translate_lines(const std::vector<std::vector<int32_t>>& sources, size_t beam) {
  const Engine& e = *g_engine;
  std::vector<edgemt::TokenSpan> spans;
  std::vector<std::vector<int32_t>> buffers(sources.size(), std::vector<int32_t>(4));
  std::vector<edgemt::Translation> results(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    spans.push_back({sources[i].data(), sources[i].size()});
    results[i].tokens = buffers[i].data();
    results[i].capacity = buffers[i].size();
  }
  edgemt::DecodeOptions options;
  options.beam_size = beam;
  options.max_len_a = 0.0f;
  options.max_len_b = 4.0f;
  FUZZ_CHECK(e.translator->translate(spans.data(), spans.size(), options, results.data()).is_ok());
  for (const edgemt::Translation& r : results) {
    FUZZ_CHECK(r.status == edgemt::StatusCode::kOk || r.status == edgemt::StatusCode::kNumericError);
    std::string text;
    FUZZ_CHECK(e.tokenizer->decode(r.tokens, r.length, &text).is_ok());
  }
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

void check_sentences(const std::string& line) {
  for (const char* language : {"en", "de", "fr", ""}) {
    const std::vector<edgemt::SentenceSpan> spans = edgemt::split_sentences(line, language);
    std::vector<std::string> texts;
    size_t after = 0;  // the previous span's end
    for (const edgemt::SentenceSpan& span : spans) {
      FUZZ_CHECK(span.begin < span.end && span.end <= line.size() && span.begin >= after);
      for (size_t i = after; i < span.begin && !texts.empty(); ++i) FUZZ_CHECK(is_space(line[i]));
      texts.push_back(line.substr(span.begin, span.end - span.begin));
      after = span.end;
    }
    if (spans.empty()) continue;
    const std::string joined = edgemt::join_sentences(line, spans, texts);
    FUZZ_CHECK(joined == line.substr(spans.front().begin, spans.back().end - spans.front().begin));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_engine = new Engine;
  edgemt::Status status = edgemt::Model::load(EDGEMT_BUNDLED_MODEL, &g_engine->model);
  edgemt::TokenizerOptions tokenizer_options;
  tokenizer_options.max_input_bytes = kMaxLineBytes;
  if (status.is_ok()) {
    status = edgemt::Tokenizer::create(*g_engine->model, tokenizer_options, &g_engine->tokenizer);
  }
  if (status.is_ok()) {
    status = edgemt::Translator::create(*g_engine->model, {}, &g_engine->translator);
  }
  edgemt::Limits limits;
  limits.max_batch = kBatch;
  limits.max_beam = 2;
  limits.max_target_len = 4;
  if (status.is_ok()) status = g_engine->translator->prepare(limits);
  if (!status.is_ok()) {
    std::fprintf(stderr, "text_fuzzer: cannot load %s: %s\n", EDGEMT_BUNDLED_MODEL, status.message());
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The CLI reads lines from a descriptor: give it one holding the input.
  const int fd = memfd_create("text_fuzzer", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(size == 0 || ::write(fd, data, size) == static_cast<ssize_t>(size));
  FUZZ_CHECK(::lseek(fd, 0, SEEK_SET) == 0);

  edgemt::cli::LineReader reader(fd, kMaxLineBytes);
  const edgemt::Model& model = *g_engine->model;
  const uint32_t vocab = edgemt::family_vocab_size(edgemt::family_config(model));
  std::string line;
  size_t bytes = 0;
  size_t consumed = 0;  // input bytes accounted for
  size_t encoded_lines = 0;
  std::vector<std::vector<int32_t>> batch;
  edgemt::cli::LineReader::Result result;
  while ((result = reader.next(&line, &bytes)) == edgemt::cli::LineReader::Result::kLine ||
         result == edgemt::cli::LineReader::Result::kTooLong) {
    FUZZ_CHECK(consumed + bytes <= size);
    if (result == edgemt::cli::LineReader::Result::kTooLong) {
      FUZZ_CHECK(bytes > kMaxLineBytes && line.empty());
    } else {
      FUZZ_CHECK(line.size() == bytes && line.size() <= kMaxLineBytes);
      FUZZ_CHECK(line.compare(0, line.size(), reinterpret_cast<const char*>(data) + consumed, bytes) == 0);
    }
    consumed += bytes;
    FUZZ_CHECK(consumed == size || data[consumed] == '\n');
    consumed += consumed < size ? 1 : 0;
    if (result == edgemt::cli::LineReader::Result::kTooLong || ++encoded_lines > kMaxEncodedLines) {
      continue;
    }

    check_sentences(line);
    std::vector<int32_t> ids;
    const edgemt::Status encoded = g_engine->tokenizer->encode(line, &ids);
    if (!encoded.is_ok()) {
      FUZZ_CHECK(encoded.code() == edgemt::StatusCode::kInvalidArgument ||
                 encoded.code() == edgemt::StatusCode::kOutOfRange);
      continue;
    }
    for (int32_t id : ids) FUZZ_CHECK(id >= 0 && static_cast<uint32_t>(id) < vocab);
    if (ids.empty() || ids.size() > g_engine->translator->limits().max_source_len) continue;
    if (batch.size() < kBatch) batch.push_back(ids);
  }
  FUZZ_CHECK(result == edgemt::cli::LineReader::Result::kEnd);
  FUZZ_CHECK(consumed == size);
  if (!batch.empty()) translate_lines(batch, data[0] % 2 + 1);
  ::close(fd);

  // Arbitrary ids (two bytes each, some past the vocabulary) decode or fail.
  std::vector<int32_t> ids;
  for (size_t i = 0; i + 1 < size && ids.size() < 64; i += 2) {
    ids.push_back(static_cast<int32_t>((data[i] | (data[i + 1] << 8)) % (vocab + 16)) - 8);
  }
  std::string text;
  const edgemt::Status decoded = g_engine->tokenizer->decode(ids.data(), ids.size(), &text);
  FUZZ_CHECK(decoded.is_ok() || decoded.code() == edgemt::StatusCode::kInvalidArgument);
  return 0;
}
