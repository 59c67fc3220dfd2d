// The C API's core part (runtime/capi/edgemt_c.cc) on the bundled int8
// model: opening from a path and from memory, the translator's phases with
// a caller arena, misuse (NULL, wrong order, small or misaligned buffers)
// answered with a code and a message, translations equal to the reference
// and to the C++ API's, detokenizing without SentencePiece, and four
// threads with a translator each over one shared model giving the same
// output as one thread (also run under ThreadSanitizer: the tsan preset).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "edgemt/edgemt.h"
#include "support/model_builder.h"
#include "support/reference_data.h"

namespace {

std::vector<std::vector<int32_t>> reference_ids(size_t count) {
  auto lines = edgemt::testing::read_id_lines(edgemt::testing::reference_path("test_2016_flickr.en.ids"));
  if (lines.size() > count) lines.resize(count);
  return lines;
}

std::vector<std::string> reference_lines(const char* name, size_t count) {
  auto lines = edgemt::testing::read_lines(edgemt::testing::reference_path(name));
  if (lines.size() > count) lines.resize(count);
  return lines;
}

std::vector<char> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A 64-byte aligned copy of `bytes` at `offset` bytes past an aligned start.
struct AlignedCopy {
  void* base = nullptr;
  char* data = nullptr;
  AlignedCopy(const std::vector<char>& bytes, size_t offset) {
    base = std::aligned_alloc(64, (bytes.size() + offset + 63) / 64 * 64);
    data = static_cast<char*>(base) + offset;
    std::memcpy(data, bytes.data(), bytes.size());
  }
  ~AlignedCopy() { std::free(base); }
};

edgemt_model* open_bundled() {
  edgemt_model* model = nullptr;
  edgemt_error error;
  REQUIRE_MESSAGE(edgemt_model_open(EDGEMT_BUNDLED_MODEL, &model, &error) == EDGEMT_OK,
                  error.message);
  return model;
}

// Greedy translations of `sources` in batches of `batch` through one
// translator of `threads` workers on a caller arena.
std::vector<std::vector<int32_t>> translate_all(const edgemt_model* model,
                                                const std::vector<std::vector<int32_t>>& sources,
                                                size_t threads, size_t batch) {
  edgemt_error error;
  edgemt_translator_options options = edgemt_translator_options_default();
  options.threads = threads;
  edgemt_translator* translator = nullptr;
  REQUIRE(edgemt_translator_create(model, &options, &translator, &error) == EDGEMT_OK);
  edgemt_limits limits = edgemt_limits_default();
  limits.max_batch = batch;
  size_t bytes = 0;
  REQUIRE(edgemt_translator_arena_size(translator, &limits, &bytes, &error) == EDGEMT_OK);
  void* arena = std::aligned_alloc(EDGEMT_ARENA_ALIGNMENT, bytes);
  REQUIRE(edgemt_translator_prepare(translator, &limits, arena, bytes, &error) == EDGEMT_OK);
  edgemt_decode_options decode;
  REQUIRE(edgemt_decode_options_default(model, &decode, &error) == EDGEMT_OK);
  decode.beam_size = 1;
  std::vector<std::vector<int32_t>> outputs(sources.size());
  for (size_t first = 0; first < sources.size(); first += batch) {
    const size_t n = std::min(batch, sources.size() - first);
    std::vector<edgemt_tokens> spans(n);
    std::vector<edgemt_result> results(n);
    for (size_t i = 0; i < n; ++i) {
      spans[i] = {sources[first + i].data(), sources[first + i].size()};
      outputs[first + i].resize(limits.max_target_len);
      results[i].tokens = outputs[first + i].data();
      results[i].capacity = outputs[first + i].size();
    }
    REQUIRE_MESSAGE(edgemt_translate(translator, spans.data(), n, &decode, results.data(),
                                     &error) == EDGEMT_OK,
                    error.message);
    for (size_t i = 0; i < n; ++i) {
      CHECK(results[i].code == EDGEMT_OK);
      outputs[first + i].resize(results[i].length);
    }
  }
  edgemt_translator_free(translator);
  std::free(arena);
  return outputs;
}

std::string detokenize(const edgemt_model* model, const std::vector<int32_t>& ids) {
  char text[4096];
  size_t length = 0;
  edgemt_error error;
  const edgemt_code code =
      edgemt_model_detokenize(model, ids.data(), ids.size(), text, sizeof(text), &length, &error);
  REQUIRE_MESSAGE(code == EDGEMT_OK, error.message);
  CHECK(std::strlen(text) == length);
  return std::string(text, length);
}

}  // namespace

TEST_CASE("capi/version and codes") {
  char expected[32];
  std::snprintf(expected, sizeof(expected), "%d.%d.%d", EDGEMT_VERSION_MAJOR,
                EDGEMT_VERSION_MINOR, EDGEMT_VERSION_PATCH);
  CHECK(std::string(edgemt_version()) == expected);
  CHECK(edgemt_format_version() >= edgemt_oldest_format_version());
  CHECK(std::string(edgemt_code_name(EDGEMT_OK)) == "ok");
  CHECK(std::string(edgemt_code_name(EDGEMT_INVALID_MODEL)) == "invalid-model");
  CHECK(std::string(edgemt_code_name(EDGEMT_NUMERIC_ERROR)) == "numeric-error");
  CHECK(std::string(edgemt_code_name(static_cast<edgemt_code>(99))) == "unknown");
}

TEST_CASE("capi/open: errors are a code and a message") {
  edgemt_model* model = nullptr;
  edgemt_error error;
  CHECK(edgemt_model_open("/nonexistent/model.emt", &model, &error) == EDGEMT_NOT_FOUND);
  CHECK(error.code == EDGEMT_NOT_FOUND);
  CHECK(std::strlen(error.message) > 0);
  CHECK(model == nullptr);
  CHECK(edgemt_model_open(nullptr, &model, &error) == EDGEMT_INVALID_ARGUMENT);
  CHECK(edgemt_model_open(EDGEMT_BUNDLED_MODEL, nullptr, &error) == EDGEMT_INVALID_ARGUMENT);
  CHECK(edgemt_model_open("/nonexistent", &model, nullptr) == EDGEMT_NOT_FOUND);  // error optional
  CHECK(edgemt_model_get_info(nullptr, nullptr, &error) == EDGEMT_INVALID_ARGUMENT);
  edgemt_model_free(nullptr);
  edgemt_translator_free(nullptr);
}

TEST_CASE("capi/open_memory: in place, aligned, whole") {
  const std::vector<char> bytes = read_file(EDGEMT_BUNDLED_MODEL);
  REQUIRE(bytes.size() > 1000);
  edgemt_error error;
  edgemt_model* model = nullptr;

  SUBCASE("aligned: opens, and translates as the file does") {
    AlignedCopy copy(bytes, 0);
    REQUIRE_MESSAGE(edgemt_model_open_memory(copy.data, bytes.size(), &model, &error) == EDGEMT_OK,
                    error.message);
    edgemt_model_info info;
    REQUIRE(edgemt_model_get_info(model, &info, &error) == EDGEMT_OK);
    CHECK(std::string(info.family) == "transformer");
    CHECK(std::string(info.source_language) == "en");
    CHECK(std::string(info.target_language) == "de");
    CHECK(std::string(info.weight_dtype) == "i8");
    CHECK(info.target_vocab_size > 1000);
    CHECK(info.has_tokenizer == 1);
    const auto sources = reference_ids(8);
    CHECK(sources[0].back() == info.source_eos_id);
    edgemt_model* mapped = open_bundled();
    CHECK(translate_all(model, sources, 1, 8) == translate_all(mapped, sources, 1, 8));
    edgemt_model_free(mapped);
    edgemt_model_free(model);
  }
  SUBCASE("misaligned: INVALID_ARGUMENT naming the alignment") {
    AlignedCopy copy(bytes, 8);
    CHECK(edgemt_model_open_memory(copy.data, bytes.size(), &model, &error) ==
          EDGEMT_INVALID_ARGUMENT);
    CHECK(std::string(error.message).find("64-byte aligned") != std::string::npos);
    CHECK(model == nullptr);
  }
  SUBCASE("truncated: INVALID_MODEL") {
    AlignedCopy copy(bytes, 0);
    CHECK(edgemt_model_open_memory(copy.data, bytes.size() / 2, &model, &error) ==
          EDGEMT_INVALID_MODEL);
    CHECK(std::strlen(error.message) > 0);
    CHECK(edgemt_model_open_memory(copy.data, 7, &model, &error) == EDGEMT_INVALID_MODEL);
    CHECK(model == nullptr);
  }
  SUBCASE("NULL") {
    CHECK(edgemt_model_open_memory(nullptr, 100, &model, &error) == EDGEMT_INVALID_ARGUMENT);
  }
}

TEST_CASE("capi/open_with: a damaged file is refused unless the checksum is skipped") {
  std::vector<char> bytes = read_file(EDGEMT_BUNDLED_MODEL);
  REQUIRE(bytes.size() > 1000);
  // The bundled model is version 4: its last 12 bytes are the integrity
  // trailer; the byte before them is the weight segment's last.
  REQUIRE(std::string(bytes.data() + bytes.size() - 12, 4) == "EMTC");
  bytes[bytes.size() - 13] ^= 0x01;
  edgemt_error error;
  edgemt_model* model = nullptr;
  AlignedCopy copy(bytes, 0);
  CHECK(edgemt_model_open_memory(copy.data, bytes.size(), &model, &error) == EDGEMT_INVALID_MODEL);
  CHECK(std::string(error.message).find("CRC-32C") != std::string::npos);
  CHECK(model == nullptr);
  REQUIRE_MESSAGE(edgemt_model_open_memory_with(copy.data, bytes.size(), EDGEMT_OPEN_SKIP_CHECKSUM,
                                                &model, &error) == EDGEMT_OK,
                  error.message);
  edgemt_model_free(model);
  model = nullptr;
  CHECK(edgemt_model_open_memory_with(copy.data, bytes.size(), EDGEMT_OPEN_COPY, &model, &error) ==
        EDGEMT_INVALID_ARGUMENT);
  CHECK(edgemt_model_open_with(EDGEMT_BUNDLED_MODEL, 4, &model, &error) == EDGEMT_INVALID_ARGUMENT);
  CHECK(std::string(error.message).find("unknown flags") != std::string::npos);
  for (uint32_t flags : {0u, EDGEMT_OPEN_COPY, EDGEMT_OPEN_SKIP_CHECKSUM,
                         EDGEMT_OPEN_COPY | EDGEMT_OPEN_SKIP_CHECKSUM}) {
    CAPTURE(flags);
    CHECK(edgemt_model_open_with(EDGEMT_BUNDLED_MODEL, flags, &model, &error) == EDGEMT_OK);
    edgemt_model_free(model);
    model = nullptr;
  }
}

TEST_CASE("capi/translator: calls in the wrong order and bad buffers get a status") {
  edgemt_model* model = open_bundled();
  edgemt_error error;
  edgemt_translator* translator = nullptr;
  REQUIRE(edgemt_translator_create(model, nullptr, &translator, &error) == EDGEMT_OK);
  const auto sources = reference_ids(2);
  edgemt_tokens spans[2] = {{sources[0].data(), sources[0].size()},
                            {sources[1].data(), sources[1].size()}};
  int32_t tokens[2][256];
  edgemt_result results[2] = {};
  for (int i = 0; i < 2; ++i) {
    results[i].tokens = tokens[i];
    results[i].capacity = 256;
  }

  // Translate before prepare.
  CHECK(edgemt_translate(translator, spans, 2, nullptr, results, &error) ==
        EDGEMT_FAILED_PRECONDITION);
  CHECK(std::string(error.message).find("not prepared") != std::string::npos);

  edgemt_limits limits = edgemt_limits_default();
  limits.max_batch = 2;
  size_t bytes = 0;
  REQUIRE(edgemt_translator_arena_size(translator, &limits, &bytes, &error) == EDGEMT_OK);
  CHECK(bytes % EDGEMT_ARENA_ALIGNMENT == 0);
  void* arena = std::aligned_alloc(EDGEMT_ARENA_ALIGNMENT, bytes + EDGEMT_ARENA_ALIGNMENT);

  // An arena too small, then misaligned: refused, and the translator stays unprepared.
  CHECK(edgemt_translator_prepare(translator, &limits, arena, bytes - 1, &error) ==
        EDGEMT_OUT_OF_MEMORY);
  CHECK(std::string(error.message).find("need") != std::string::npos);
  CHECK(edgemt_translator_prepare(translator, &limits, static_cast<char*>(arena) + 16, bytes,
                                  &error) == EDGEMT_INVALID_ARGUMENT);
  CHECK(std::string(error.message).find("aligned") != std::string::npos);
  CHECK(edgemt_translator_prepare(translator, &limits, nullptr, 100, &error) ==
        EDGEMT_INVALID_ARGUMENT);
  CHECK(edgemt_translate(translator, spans, 2, nullptr, results, &error) ==
        EDGEMT_FAILED_PRECONDITION);

  // Limits the model does not allow.
  edgemt_limits too_long = limits;
  too_long.max_source_len = 1u << 20;
  CHECK(edgemt_translator_arena_size(translator, &too_long, &bytes, &error) ==
        EDGEMT_INVALID_ARGUMENT);
  edgemt_limits zero = limits;
  zero.max_batch = 0;
  CHECK(edgemt_translator_prepare(translator, &zero, nullptr, 0, &error) == EDGEMT_INVALID_ARGUMENT);

  // Prepared: a batch over the limit, a bad id, a result without memory.
  REQUIRE(edgemt_translator_prepare(translator, &limits, arena, bytes, &error) == EDGEMT_OK);
  CHECK(edgemt_translate(translator, spans, 3, nullptr, results, &error) == EDGEMT_INVALID_ARGUMENT);
  std::vector<int32_t> bad = {5, 1 << 30, 3};
  edgemt_tokens bad_span = {bad.data(), bad.size()};
  CHECK(edgemt_translate(translator, &bad_span, 1, nullptr, results, &error) ==
        EDGEMT_INVALID_ARGUMENT);
  edgemt_result no_memory = {};
  no_memory.capacity = 10;
  CHECK(edgemt_translate(translator, spans, 1, nullptr, &no_memory, &error) ==
        EDGEMT_INVALID_ARGUMENT);
  CHECK(edgemt_translate(nullptr, spans, 1, nullptr, results, &error) == EDGEMT_INVALID_ARGUMENT);
  CHECK(edgemt_translate(translator, nullptr, 1, nullptr, results, &error) ==
        EDGEMT_INVALID_ARGUMENT);

  // And it still translates.
  REQUIRE(edgemt_translate(translator, spans, 2, nullptr, results, &error) == EDGEMT_OK);
  CHECK(error.code == EDGEMT_OK);
  CHECK(results[0].code == EDGEMT_OK);
  CHECK(results[0].length > 0);
  CHECK(std::string(results[0].error).empty());
  edgemt_translator_free(translator);
  std::free(arena);
  edgemt_model_free(model);
}

TEST_CASE("capi/set_marian_int8_sums: 0..3, Marian's int8 files only, before prepare") {
  edgemt_model* model = open_bundled();  // int8 in edgemt's own arithmetic
  edgemt_error error;
  edgemt_translator* translator = nullptr;
  REQUIRE(edgemt_translator_create(model, nullptr, &translator, &error) == EDGEMT_OK);
  CHECK(edgemt_translator_set_marian_int8_sums(nullptr, 1, &error) == EDGEMT_INVALID_ARGUMENT);
  for (int sums : {-1, 4}) {
    CHECK(edgemt_translator_set_marian_int8_sums(translator, sums, &error) ==
          EDGEMT_INVALID_ARGUMENT);
    CHECK(std::string(error.message).find("sums is 0..3") != std::string::npos);
  }
  CHECK(edgemt_translator_set_marian_int8_sums(translator, 1, &error) == EDGEMT_INVALID_ARGUMENT);
  CHECK(std::string(error.message).find("Marian's int8 sums apply to int8 files in Marian's") !=
        std::string::npos);
  // Exact sums are every file's; the choices made before are kept, and
  // the translator still translates as before.
  REQUIRE(edgemt_translator_set_greedy_scores(translator, 0, &error) == EDGEMT_OK);
  REQUIRE(edgemt_translator_set_marian_int8_sums(translator, 0, &error) == EDGEMT_OK);
  edgemt_limits limits = edgemt_limits_default();
  limits.max_batch = 1;
  REQUIRE(edgemt_translator_prepare(translator, &limits, nullptr, 0, &error) == EDGEMT_OK);
  const auto sources = reference_ids(1);
  edgemt_tokens span = {sources[0].data(), sources[0].size()};
  int32_t tokens[256];
  edgemt_result result = {};
  result.tokens = tokens;
  result.capacity = 256;
  edgemt_decode_options decode;
  REQUIRE(edgemt_decode_options_default(model, &decode, &error) == EDGEMT_OK);
  decode.beam_size = 1;
  REQUIRE(edgemt_translate(translator, &span, 1, &decode, &result, &error) == EDGEMT_OK);
  CHECK(result.length > 0);
  CHECK(std::isnan(result.score));  // greedy scores still off
  CHECK(edgemt_translator_set_marian_int8_sums(translator, 0, &error) ==
        EDGEMT_FAILED_PRECONDITION);
  edgemt_translator_free(translator);
  edgemt_model_free(model);
}

TEST_CASE("capi/set_greedy_scores: same tokens, score NaN; a NULL translator is refused") {
  edgemt_error error;
  CHECK(edgemt_translator_set_greedy_scores(nullptr, 0, &error) == EDGEMT_INVALID_ARGUMENT);
  CHECK(std::string(error.message).find("NULL") != std::string::npos);
  // The fp16 model: computed in f32 here, so the shortcut is built.
  edgemt_model* model = nullptr;
  REQUIRE(edgemt_model_open(EDGEMT_BUNDLED_FP16_MODEL, &model, &error) == EDGEMT_OK);
  edgemt_translator* translator = nullptr;
  REQUIRE(edgemt_translator_create(model, nullptr, &translator, &error) == EDGEMT_OK);
  edgemt_limits limits = edgemt_limits_default();
  limits.max_batch = 1;
  REQUIRE(edgemt_translator_prepare(translator, &limits, nullptr, 0, &error) == EDGEMT_OK);
  const auto sources = reference_ids(12);
  std::vector<std::vector<int32_t>> scored;
  for (int scores : {1, 0}) {
    REQUIRE(edgemt_translator_set_greedy_scores(translator, scores, &error) == EDGEMT_OK);
    for (size_t i = 0; i < sources.size(); ++i) {
      CAPTURE(i);
      edgemt_tokens span = {sources[i].data(), sources[i].size()};
      int32_t tokens[256];
      edgemt_result result = {};
      result.tokens = tokens;
      result.capacity = 256;
      REQUIRE(edgemt_translate(translator, &span, 1, nullptr, &result, &error) == EDGEMT_OK);
      REQUIRE(result.code == EDGEMT_OK);
      const std::vector<int32_t> got(tokens, tokens + result.length);
      if (scores != 0) {
        CHECK(std::isfinite(result.score));
        scored.push_back(got);
      } else {
        CHECK(std::isnan(result.score));
        CHECK(got == scored[i]);
      }
    }
  }
  edgemt_translator_free(translator);
  edgemt_model_free(model);
}

// A shortlist: refused for a model without one; turned off, a file with
// one translates as the same file without it; on, differently (random
// weights rarely pick a candidate on their own).
TEST_CASE("capi/set_shortlist: off gives the whole vocabulary's output; checked arguments") {
  edgemt_error error;
  CHECK(edgemt_translator_set_shortlist(nullptr, 0, &error) == EDGEMT_INVALID_ARGUMENT);
  CHECK(std::string(error.message).find("NULL") != std::string::npos);
  auto tokens_of = [&](const edgemt::testing::ModelBuilder& builder, int use, int expected) {
    edgemt::testing::TempFile file(builder.build());
    edgemt_model* model = nullptr;
    REQUIRE(edgemt_model_open(file.path().c_str(), &model, &error) == EDGEMT_OK);
    edgemt_translator* translator = nullptr;
    REQUIRE(edgemt_translator_create(model, nullptr, &translator, &error) == EDGEMT_OK);
    CHECK(edgemt_translator_set_shortlist(translator, use, &error) == expected);
    edgemt_limits limits = edgemt_limits_default();
    limits.max_source_len = 16;
    limits.max_target_len = 16;
    REQUIRE(edgemt_translator_prepare(translator, &limits, nullptr, 0, &error) == EDGEMT_OK);
    std::vector<int32_t> source = {7, 19, 23, 3};
    edgemt_tokens span = {source.data(), source.size()};
    int32_t tokens[16];
    edgemt_result result = {};
    result.tokens = tokens;
    result.capacity = 16;
    REQUIRE(edgemt_translate(translator, &span, 1, nullptr, &result, &error) == EDGEMT_OK);
    edgemt_translator_free(translator);
    edgemt_model_free(model);
    return std::vector<int32_t>(tokens, tokens + result.length);
  };
  edgemt::testing::ModelBuilder plain;
  edgemt::testing::ModelBuilder listed = plain;
  edgemt::testing::BuilderShortlist list;
  list.first = 4;
  list.offsets.assign(plain.config.vocab_size + 1, 0);
  listed.shortlist = list;  // ids 0-3, the source ids, padded to 8
  const std::vector<int32_t> whole = tokens_of(plain, 0, EDGEMT_OK);
  CHECK(tokens_of(plain, 1, EDGEMT_FAILED_PRECONDITION) == whole);
  CHECK(tokens_of(listed, 0, EDGEMT_OK) == whole);
  const std::vector<int32_t> restricted = tokens_of(listed, 1, EDGEMT_OK);
  CHECK(restricted != whole);
  for (int32_t id : restricted) CHECK((id < 8 || id == 19 || id == 23));
}

TEST_CASE("capi/translate: the reference translations, detokenized without SentencePiece") {
  edgemt_model* model = open_bundled();
  const size_t count = 64;
  const auto sources = reference_ids(count);
  const auto expected = reference_lines("edgemt_int8_greedy.de", count);
  const auto outputs = translate_all(model, sources, 1, 16);
  for (size_t i = 0; i < count; ++i) CHECK(detokenize(model, outputs[i]) == expected[i]);
  edgemt_model_free(model);
}

TEST_CASE("capi/detokenize: specials skipped, bounds, small buffers") {
  edgemt_model* model = open_bundled();
  edgemt_error error;
  const auto outputs = translate_all(model, reference_ids(1), 1, 1);
  const std::string whole = detokenize(model, outputs[0]);
  REQUIRE(whole.size() > 10);
  // EOS (3) and pad (1 here) add nothing.
  std::vector<int32_t> with_specials = outputs[0];
  with_specials.push_back(3);
  CHECK(detokenize(model, with_specials) == whole);
  // Too small: OUT_OF_RANGE, a NUL-terminated prefix.
  char small[12];
  size_t length = 0;
  CHECK(edgemt_model_detokenize(model, outputs[0].data(), outputs[0].size(), small, sizeof(small),
                                &length, &error) == EDGEMT_OUT_OF_RANGE);
  CHECK(length < sizeof(small));
  CHECK(std::strlen(small) == length);
  CHECK(whole.compare(0, length, small) == 0);
  // An id outside the vocabulary.
  const int32_t bad = 1 << 30;
  char text[64];
  CHECK(edgemt_model_detokenize(model, &bad, 1, text, sizeof(text), &length, &error) ==
        EDGEMT_INVALID_ARGUMENT);
  CHECK(edgemt_model_detokenize(model, &bad, 1, text, 0, &length, &error) == EDGEMT_INVALID_ARGUMENT);
  edgemt_model_free(model);
}

TEST_CASE("capi/threads: four translators over one model give the single-threaded output") {
  edgemt_model* model = open_bundled();
  const auto sources = reference_ids(200);
  REQUIRE(sources.size() == 200);
  const auto single = translate_all(model, sources, 1, 8);
  std::vector<std::vector<std::vector<int32_t>>> outputs(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    // Two of them run worker threads of their own as well.
    threads.emplace_back([&, t] { outputs[t] = translate_all(model, sources, t % 2 + 1, 8); });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t t = 0; t < 4; ++t) CHECK(outputs[t] == single);
  edgemt_model_free(model);
}
