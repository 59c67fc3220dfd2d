// Proof that the run phase allocates nothing.
//
// This executable replaces the global allocation functions (malloc, calloc,
// realloc, aligned_alloc, posix_memalign, memalign and every operator new)
// with counting wrappers, and reads the XNNPACK allocator's counter. A batch
// of real sentences from the bundled model's reference set is translated
// through the token-id API, greedy and beam 4, with 1 and 2 threads; between
// translate()'s entry and return both counters must not move, also with a
// Profile attached (edgemt/profile.h).
#include <algorithm>
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/xnnpack_runtime.h"
#include "edgemt/edgemt.h"
#include "edgemt/model.h"
#include "edgemt/profile.h"
#include "edgemt/tokenizer.h"
#include "edgemt/translator.h"
#include "support/model_builder.h"

using namespace edgemt::transformer;  // the family under test

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

namespace {

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocations{0};

void count() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
}

}  // namespace

extern "C" {
void* malloc(size_t size) {
  count();
  return __libc_malloc(size);
}
void* calloc(size_t n, size_t size) {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* pointer, size_t size) {
  count();
  return __libc_realloc(pointer, size);
}
void* memalign(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  count();
  *out = __libc_memalign(alignment, size);
  return *out == nullptr ? 12 /* ENOMEM */ : 0;
}
}

void* operator new(size_t size) {
  count();
  void* p = __libc_malloc(size == 0 ? 1 : size);
  if (p == nullptr) std::abort();
  return p;
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  count();
  return __libc_malloc(size == 0 ? 1 : size);
}
void* operator new[](size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void* operator new(size_t size, std::align_val_t alignment) {
  count();
  void* p = __libc_memalign(static_cast<size_t>(alignment), size == 0 ? 1 : size);
  if (p == nullptr) std::abort();
  return p;
}
void* operator new[](size_t size, std::align_val_t alignment) { return operator new(size, alignment); }
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete[](void* p, size_t) noexcept { free(p); }
void operator delete(void* p, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { free(p); }

namespace {

struct Counts {
  uint64_t heap = 0;
  uint64_t xnnpack = 0;
};

// Runs `f` with counting on; returns the allocations it made.
template <typename F>
Counts count_allocations(F&& f) {
  const uint64_t heap_before = g_allocations.load();
  const uint64_t xnn_before = edgemt::xnnpack_allocation_count();
  g_counting.store(true);
  f();
  g_counting.store(false);
  return {g_allocations.load() - heap_before, edgemt::xnnpack_allocation_count() - xnn_before};
}

std::vector<std::string> reference_sentences(size_t count) {
  std::vector<std::string> lines;
  std::ifstream in(EDGEMT_SOURCE_DIR "/models/reference/test_2016_flickr.en");
  std::string line;
  while (lines.size() < count && std::getline(in, line)) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("the allocation counters see allocations") {
  const Counts counts = count_allocations([] {
    void* volatile p = std::malloc(16);
    std::free(p);
    int* volatile q = new int(3);
    delete q;
  });
  CHECK(counts.heap == 2);
}

// One translate() call, counted: it must succeed without a heap or XNNPACK
// allocation.
static void translate_without_allocating(edgemt::Translator* translator,
                                         const std::vector<edgemt::TokenSpan>& spans,
                                         const edgemt::DecodeOptions& decode,
                                         std::vector<edgemt::Translation>* results) {
  bool ok = false;
  const Counts counts = count_allocations([&] {
    ok = translator->translate(spans.data(), spans.size(), decode, results->data()).is_ok();
  });
  REQUIRE(ok);
  CHECK(counts.heap == 0);
  CHECK(counts.xnnpack == 0);
}

// Runs the allocation check: 12 reference sentences, 1 and 2 threads,
// greedy and beam 4, with `profile` attached (nullptr: none); with
// `attention`, every result also asks for its attention weights.
static void check_translate_allocates_nothing(const char* path, edgemt::Profile* profile,
                                              bool attention = false) {
  CAPTURE(std::string(path));
  std::unique_ptr<edgemt::Model> model;
  REQUIRE_MESSAGE(edgemt::Model::load(path, &model).is_ok(), "bundled model missing: " << path);
  std::unique_ptr<edgemt::Tokenizer> tokenizer;
  REQUIRE(edgemt::Tokenizer::create(*model, &tokenizer).is_ok());

  const std::vector<std::string> lines = reference_sentences(12);
  REQUIRE(lines.size() == 12);
  std::vector<std::vector<int32_t>> ids(lines.size());
  std::vector<edgemt::TokenSpan> spans(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    REQUIRE(tokenizer->encode(lines[i], &ids[i]).is_ok());
    spans[i] = {ids[i].data(), ids[i].size()};
  }

  for (size_t threads : {size_t{1}, size_t{2}}) {
    edgemt::TranslatorOptions options;
    options.threads = threads;
    std::unique_ptr<edgemt::Translator> translator;
    REQUIRE(edgemt::Translator::create(*model, options, &translator).is_ok());
    edgemt::Limits limits;
    limits.max_batch = lines.size();
    limits.max_beam = 4;
    limits.max_source_len = 128;
    limits.max_target_len = 128;
    limits.attention = attention;
    REQUIRE(translator->prepare(limits).is_ok());
    translator->set_profile(profile);

    std::vector<std::vector<int32_t>> buffers(lines.size(), std::vector<int32_t>(128));
    std::vector<std::vector<float>> weights(lines.size(), std::vector<float>(128 * 128));
    std::vector<edgemt::Translation> results(lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
      results[i].tokens = buffers[i].data();
      results[i].capacity = buffers[i].size();
      if (attention) {
        results[i].attention = weights[i].data();
        results[i].attention_capacity = weights[i].size();
      }
    }
    // Greedy with and without scores (the arg-max shortcut, built by
    // set_greedy_scores outside the counted call), then beam 4.
    for (int config = 0; config < 3; ++config) {
      const size_t beam = config == 2 ? 4 : 1;
      const bool scores = config != 1;
      CAPTURE(threads);
      CAPTURE(beam);
      CAPTURE(scores);
      REQUIRE(translator->set_greedy_scores(scores).is_ok());
      edgemt::DecodeOptions decode;
      decode.beam_size = beam;
      translate_without_allocating(translator.get(), spans, decode, &results);
      for (const edgemt::Translation& result : results) {
        CHECK(result.length > 0);
        if (attention) CHECK(result.attention_rows >= result.length);
      }
    }
  }
}

// The RNN family (tests/fixtures/torch_rnn/: an int8 bidirectional
// two-layer LSTM with Bahdanau attention, an fp32 two-layer GRU with Luong
// general attention), with and without attention weights asked for.
TEST_CASE("translate() makes no heap or XNNPACK allocation (RNN models, attention weights)") {
  for (const char* path : {EDGEMT_SOURCE_DIR "/tests/fixtures/torch_rnn/bahdanau-lstm.int8.emt",
                           EDGEMT_SOURCE_DIR "/tests/fixtures/torch_rnn/luong-general-gru.fp32.emt"}) {
    check_translate_allocates_nothing(path, nullptr);
    check_translate_allocates_nothing(path, nullptr, true);
  }
}

TEST_CASE("translate() makes no heap or XNNPACK allocation (int8 and fp16 models)") {
  check_translate_allocates_nothing(EDGEMT_BUNDLED_MODEL, nullptr);
  check_translate_allocates_nothing(EDGEMT_BUNDLED_FP16_MODEL, nullptr);
}

// Transformer cross-attention weights (the last layer's mean over heads).
TEST_CASE("translate() makes no heap or XNNPACK allocation (Transformer attention weights)") {
  check_translate_allocates_nothing(EDGEMT_BUNDLED_MODEL, nullptr, true);
  check_translate_allocates_nothing(EDGEMT_BUNDLED_FP16_MODEL, nullptr, true);
}

TEST_CASE("translate() with a Profile attached makes no heap or XNNPACK allocation") {
  edgemt::Profile profile;
  check_translate_allocates_nothing(EDGEMT_BUNDLED_MODEL, &profile);
  CHECK(profile.count(edgemt::ProfilePart::kTranslate) == 6);  // 2 thread counts x 3 decodings
  CHECK(profile.ns(edgemt::ProfilePart::kDecoderStep) > 0);
}

// `count` sources of 3, 4, ... ids in [4, 4 + range), each ending with eos.
struct SyntheticSources {
  std::vector<std::vector<int32_t>> ids;
  std::vector<edgemt::TokenSpan> spans;
};
static void make_sources(size_t count, int32_t range, int32_t eos, SyntheticSources* out) {
  out->ids.clear();
  for (int32_t s = 0; s < static_cast<int32_t>(count); ++s) {
    std::vector<int32_t> sentence;
    for (int32_t t = 0; t < 3 + s; ++t) sentence.push_back(4 + (s * 37 + t * 11) % range);
    sentence.push_back(eos);
    out->ids.push_back(sentence);
  }
  out->spans.clear();
  for (const std::vector<int32_t>& sentence : out->ids) {
    out->spans.push_back({sentence.data(), sentence.size()});
  }
}

// An f32 model set to greedy without scores before prepare(): its output
// projection stays unpacked (computed from the file's rows, packed 64 rows
// at a time into the arena); the arg-max shortcut's candidates, and beam
// search's full rows, come from there without allocating.
TEST_CASE("translate() makes no heap or XNNPACK allocation (f32 output projection left unpacked)") {
  edgemt::transformer::TransformerConfig config = edgemt::testing::tiny_config();
  config.vocab_size = 200;
  config.d_model = 32;
  config.heads = 4;
  config.ffn_dim = 48;
  config.output_bias = true;
  config.max_positions = 32;
  const edgemt::testing::ModelBuilder builder(config, edgemt::DType::kF32, 5);
  edgemt::testing::TempFile file(builder.build());
  REQUIRE(file.ok());
  std::unique_ptr<edgemt::Model> model;
  REQUIRE(edgemt::Model::load(file.path().c_str(), &model).is_ok());
  SyntheticSources sources;
  make_sources(6, 190, builder.special_tokens.eos, &sources);
  const std::vector<edgemt::TokenSpan>& spans = sources.spans;
  for (size_t threads : {size_t{1}, size_t{2}}) {
    CAPTURE(threads);
    edgemt::TranslatorOptions options;
    options.threads = threads;
    options.min_parallel_nanoseconds = 0;  // split every call
    std::unique_ptr<edgemt::Translator> translator;
    REQUIRE(edgemt::Translator::create(*model, options, &translator).is_ok());
    REQUIRE(translator->set_greedy_scores(false).is_ok());
    edgemt::Limits limits;
    limits.max_batch = spans.size();
    limits.max_beam = 4;
    limits.max_source_len = 32;
    limits.max_target_len = 32;
    const edgemt::Status prepared = translator->prepare(limits);
    REQUIRE_MESSAGE(prepared.is_ok(), prepared.message());
    std::vector<std::vector<int32_t>> buffers(spans.size(), std::vector<int32_t>(32));
    std::vector<edgemt::Translation> results(spans.size());
    for (size_t beam : {size_t{1}, size_t{4}}) {
      CAPTURE(beam);
      for (size_t i = 0; i < spans.size(); ++i) {
        results[i].tokens = buffers[i].data();
        results[i].capacity = buffers[i].size();
      }
      edgemt::DecodeOptions decode;
      decode.beam_size = beam;
      decode.max_len_b = 20.0f;
      translate_without_allocating(translator.get(), spans, decode, &results);
    }
    // One sentence at a time: fewer rows than threads, so the shortcut's
    // passes are cut into column ranges (ArgmaxShortcut::pick_row_split).
    edgemt::DecodeOptions greedy;
    greedy.beam_size = 1;
    greedy.max_len_b = 20.0f;
    for (size_t i = 0; i < spans.size(); ++i) {
      std::vector<edgemt::Translation> one(1);
      one[0].tokens = buffers[i].data();
      one[0].capacity = buffers[i].size();
      translate_without_allocating(translator.get(), {spans[i]}, greedy, &one);
    }
  }
}

// A lexical shortlist: each call's candidates, the gathered pack of their
// output columns (f32 from the pack or the file's rows, int8), the arg-max
// shortcut's gather beside an f32 one (d 128), and a set too large to
// gather (every logit, the candidates kept), all in the arena.
TEST_CASE("translate() makes no heap or XNNPACK allocation (lexical shortlist)") {
  for (const uint32_t first : {uint32_t{4}, uint32_t{3000}}) {
    struct Kind {
      edgemt::DType dtype;
      size_t d_model;
    };
    for (const Kind kind : {Kind{edgemt::DType::kF32, 16}, Kind{edgemt::DType::kI8, 16},
                            Kind{edgemt::DType::kF32, 128}}) {
      const edgemt::DType dtype = kind.dtype;
      const size_t d_model = kind.d_model;
      CAPTURE(first);
      CAPTURE(static_cast<int>(dtype));
      CAPTURE(d_model);
      edgemt::transformer::TransformerConfig config = edgemt::testing::tiny_config();
      config.vocab_size = 4096;
      config.d_model = d_model;
      config.heads = 2;
      config.ffn_dim = 24;
      config.output_bias = true;
      config.max_positions = 32;
      edgemt::testing::ModelBuilder builder(config, dtype, 6);
      edgemt::testing::BuilderShortlist list;
      list.first = first;
      list.best = 3;
      list.add_source_ids = true;
      list.offsets.push_back(0);
      for (uint32_t s = 0; s < config.vocab_size; ++s) {
        for (uint32_t j = 0; j < 3; ++j) list.targets.push_back(4 + (s * 7 + j * 1301) % 4092 / 3 * 3 + j);
        std::sort(list.targets.end() - 3, list.targets.end());
        list.offsets.push_back(static_cast<uint32_t>(list.targets.size()));
      }
      builder.shortlist = list;
      edgemt::testing::TempFile file(builder.build());
      REQUIRE(file.ok());
      std::unique_ptr<edgemt::Model> model;
      const edgemt::Status loaded = edgemt::Model::load(file.path().c_str(), &model);
      REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
      SyntheticSources sources;
      make_sources(4, 4000, builder.special_tokens.eos, &sources);
      const std::vector<edgemt::TokenSpan>& spans = sources.spans;
      for (size_t threads : {size_t{1}, size_t{2}}) {
        for (bool scores : {true, false}) {
          CAPTURE(threads);
          CAPTURE(scores);
          edgemt::TranslatorOptions options;
          options.threads = threads;
          options.min_parallel_nanoseconds = 0;
          std::unique_ptr<edgemt::Translator> translator;
          REQUIRE(edgemt::Translator::create(*model, options, &translator).is_ok());
          REQUIRE(translator->set_greedy_scores(scores).is_ok());
          edgemt::Limits limits;
          limits.max_batch = spans.size();
          limits.max_beam = 4;
          limits.max_source_len = 32;
          limits.max_target_len = 32;
          REQUIRE(translator->prepare(limits).is_ok());
          REQUIRE(translator->shortlist());
          std::vector<std::vector<int32_t>> buffers(spans.size(), std::vector<int32_t>(32));
          std::vector<edgemt::Translation> results(spans.size());
          for (size_t beam : {size_t{1}, size_t{4}}) {
            for (size_t i = 0; i < spans.size(); ++i) {
              results[i].tokens = buffers[i].data();
              results[i].capacity = buffers[i].size();
            }
            edgemt::DecodeOptions decode;
            decode.beam_size = beam;
            decode.max_len_b = 10.0f;
            translate_without_allocating(translator.get(), spans, decode, &results);
          }
        }
      }
    }
  }
}

// The C API (edgemt/edgemt.h) on a caller arena: prepare and translate
// allocate nothing, with 1 and 2 threads, greedy and beam 4, the model
// opened from memory as firmware does.
TEST_CASE("the C API with a caller arena: prepare and edgemt_translate allocate nothing") {
  std::ifstream in(EDGEMT_BUNDLED_MODEL, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 1000);
  void* blob = std::aligned_alloc(EDGEMT_MODEL_ALIGNMENT, (bytes.size() + 63) / 64 * 64);
  std::memcpy(blob, bytes.data(), bytes.size());
  edgemt_error error;
  edgemt_model* model = nullptr;
  REQUIRE(edgemt_model_open_memory(blob, bytes.size(), &model, &error) == EDGEMT_OK);
  edgemt_tokenizer* tokenizer = nullptr;
  REQUIRE(edgemt_tokenizer_create(model, &tokenizer, &error) == EDGEMT_OK);

  const std::vector<std::string> lines = reference_sentences(12);
  REQUIRE(lines.size() == 12);
  std::vector<std::vector<int32_t>> ids(lines.size(), std::vector<int32_t>(128));
  std::vector<edgemt_tokens> spans(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    size_t length = 0;
    REQUIRE(edgemt_tokenizer_encode(tokenizer, lines[i].data(), lines[i].size(), ids[i].data(),
                                    ids[i].size(), &length, &error) == EDGEMT_OK);
    spans[i] = {ids[i].data(), length};
  }
  std::vector<std::vector<int32_t>> buffers(lines.size(), std::vector<int32_t>(128));
  std::vector<edgemt_result> results(lines.size());
  for (size_t threads : {size_t{1}, size_t{2}}) {
    CAPTURE(threads);
    edgemt_translator_options options = edgemt_translator_options_default();
    options.threads = threads;
    edgemt_translator* translator = nullptr;
    REQUIRE(edgemt_translator_create(model, &options, &translator, &error) == EDGEMT_OK);
    edgemt_limits limits = {lines.size(), 128, 4, 128, 0, -1, -1};
    size_t arena_bytes = 0;
    REQUIRE(edgemt_translator_arena_size(translator, &limits, &arena_bytes, &error) == EDGEMT_OK);
    void* arena = std::aligned_alloc(EDGEMT_ARENA_ALIGNMENT, arena_bytes);
    edgemt_code prepared = EDGEMT_BACKEND_ERROR;
    const Counts prepare_counts = count_allocations([&] {
      prepared = edgemt_translator_prepare(translator, &limits, arena, arena_bytes, &error);
    });
    REQUIRE(prepared == EDGEMT_OK);
    CHECK(prepare_counts.heap == 0);
    CHECK(prepare_counts.xnnpack == 0);
    for (size_t beam : {size_t{1}, size_t{4}}) {
      CAPTURE(beam);
      edgemt_decode_options decode;
      REQUIRE(edgemt_decode_options_default(model, &decode, &error) == EDGEMT_OK);
      decode.beam_size = beam;
      for (size_t i = 0; i < lines.size(); ++i) {
        results[i].tokens = buffers[i].data();
        results[i].capacity = buffers[i].size();
      }
      edgemt_code code = EDGEMT_BACKEND_ERROR;
      const Counts counts = count_allocations([&] {
        code = edgemt_translate(translator, spans.data(), spans.size(), &decode, results.data(), &error);
      });
      REQUIRE(code == EDGEMT_OK);
      CHECK(counts.heap == 0);
      CHECK(counts.xnnpack == 0);
      for (const edgemt_result& result : results) CHECK(result.length > 0);
    }
    edgemt_translator_free(translator);
    std::free(arena);
  }
  edgemt_tokenizer_free(tokenizer);
  edgemt_model_free(model);
  std::free(blob);
}
