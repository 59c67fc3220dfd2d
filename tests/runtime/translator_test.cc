// Translator on the bundled models (int8 default, fp16): the decoding paths
// (batching, threads, beams) must agree with each other and with the PyTorch
// references.
#include "edgemt/translator.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "edgemt/limits.h"
#include "kernels/f32_gemm.h"
#include "support/reference_data.h"
#include "models/transformer/config.h"

using namespace edgemt::transformer;  // the family under test

namespace {

using edgemt::testing::read_id_lines;
using edgemt::testing::reference_path;
using Ids = std::vector<int32_t>;

struct Loaded {
  std::unique_ptr<edgemt::Model> model;
  std::unique_ptr<edgemt::Translator> translator;
};

Loaded load(const char* path, size_t threads, size_t max_batch, size_t max_beam,
            size_t min_parallel_nanoseconds = edgemt::TranslatorOptions{}.min_parallel_nanoseconds) {
  Loaded loaded;
  const edgemt::Status status = edgemt::Model::load(path, &loaded.model);
  REQUIRE_MESSAGE(status.is_ok(), status.message());
  edgemt::TranslatorOptions options;
  options.threads = threads;
  options.min_parallel_nanoseconds = min_parallel_nanoseconds;
  REQUIRE(edgemt::Translator::create(*loaded.model, options, &loaded.translator).is_ok());
  edgemt::Limits limits;
  limits.max_batch = max_batch;
  limits.max_beam = max_beam;
  limits.max_source_len = 256;
  limits.max_target_len = 256;
  REQUIRE(loaded.translator->prepare(limits).is_ok());
  return loaded;
}

// Translates `sources` in batches of `batch`.
std::vector<Ids> translate_all(edgemt::Translator& translator, const std::vector<Ids>& sources,
                               size_t batch, size_t beam) {
  std::vector<Ids> outputs;
  edgemt::DecodeOptions options;
  options.beam_size = beam;
  for (size_t first = 0; first < sources.size(); first += batch) {
    const size_t count = std::min(batch, sources.size() - first);
    std::vector<edgemt::TokenSpan> spans(count);
    std::vector<Ids> buffers(count, Ids(256));
    std::vector<edgemt::Translation> results(count);
    for (size_t i = 0; i < count; ++i) {
      spans[i] = {sources[first + i].data(), sources[first + i].size()};
      results[i].tokens = buffers[i].data();
      results[i].capacity = buffers[i].size();
    }
    const edgemt::Status status = translator.translate(spans.data(), count, options, results.data());
    REQUIRE_MESSAGE(status.is_ok(), status.message());
    for (size_t i = 0; i < count; ++i) {
      outputs.emplace_back(results[i].tokens, results[i].tokens + results[i].length);
    }
  }
  return outputs;
}

std::vector<Ids> first_sources(size_t count) {
  std::vector<Ids> sources = read_id_lines(reference_path("test_2016_flickr.en.ids"));
  REQUIRE(sources.size() >= count);
  sources.resize(count);
  return sources;
}

size_t count_equal(const std::vector<Ids>& a, const std::vector<Ids>& b) {
  size_t equal = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) equal += a[i] == b[i];
  return equal;
}

}  // namespace

constexpr const char* kBundledModels[] = {EDGEMT_BUNDLED_MODEL, EDGEMT_BUNDLED_FP16_MODEL};

// XNNPACK's f16 GEMMs (the fp16 model on CPUs with fp16 arithmetic) round
// their sums to half in an order that depends on the row count, so batched
// and one-at-a-time outputs may differ there; every other path gives the
// same bits for any batch.
bool batch_invariant(const Loaded& loaded) {
  if (std::string(loaded.translator->compute_path()).rfind("f16", 0) != 0) return true;
  MESSAGE("skipped for the fp16 model: XNNPACK f16 GEMM results depend on the batch");
  return false;
}

TEST_CASE("batched greedy output equals one-at-a-time output") {
  const std::vector<Ids> sources = first_sources(48);
  for (const char* path : kBundledModels) {
    CAPTURE(std::string(path));
    Loaded loaded = load(path, 1, 16, 1);
    if (!batch_invariant(loaded)) continue;
    const std::vector<Ids> one = translate_all(*loaded.translator, sources, 1, 1);
    const std::vector<Ids> batched = translate_all(*loaded.translator, sources, 16, 1);
    CHECK(count_equal(one, batched) == sources.size());
  }
}

TEST_CASE("batched beam output equals one-at-a-time output") {
  const std::vector<Ids> sources = first_sources(24);
  for (const char* path : kBundledModels) {
    CAPTURE(std::string(path));
    Loaded loaded = load(path, 1, 8, 4);
    if (!batch_invariant(loaded)) continue;
    const std::vector<Ids> one = translate_all(*loaded.translator, sources, 1, 4);
    const std::vector<Ids> batched = translate_all(*loaded.translator, sources, 8, 4);
    CHECK(count_equal(one, batched) == sources.size());
  }
}

TEST_CASE("output is identical for 1 2 and 3 threads") {
  const std::vector<Ids> sources = first_sources(32);
  for (const char* path : kBundledModels) {
    CAPTURE(std::string(path));
    Loaded single = load(path, 1, 16, 4);
    const std::vector<Ids> greedy1 = translate_all(*single.translator, sources, 16, 1);
    const std::vector<Ids> beam1 = translate_all(*single.translator, sources, 8, 4);
    for (size_t threads : {size_t{2}, size_t{3}}) {
      CAPTURE(threads);
      Loaded multi = load(path, threads, 16, 4);
      CHECK(count_equal(greedy1, translate_all(*multi.translator, sources, 16, 1)) == sources.size());
      CHECK(count_equal(beam1, translate_all(*multi.translator, sources, 8, 4)) == sources.size());
    }
  }
}

TEST_CASE("output is identical when every call is split over threads") {
  // min_parallel_nanoseconds 0: batch-1 calls, which the default keeps on the
  // calling thread, are split too (attention over 4 heads of one query, int8
  // products of one row). Few sentences: this is the slow configuration.
  const std::vector<Ids> sources = first_sources(8);
  for (const char* path : kBundledModels) {
    CAPTURE(std::string(path));
    Loaded single = load(path, 1, 8, 4);
    Loaded split = load(path, 2, 8, 4, 0);
    for (size_t beam : {size_t{1}, size_t{4}}) {
      CAPTURE(beam);
      CHECK(count_equal(translate_all(*single.translator, sources, 1, beam),
                        translate_all(*split.translator, sources, 1, beam)) == sources.size());
    }
    CHECK(count_equal(translate_all(*single.translator, sources, 8, 4),
                      translate_all(*split.translator, sources, 8, 4)) == sources.size());
  }
}

TEST_CASE("greedy without scores gives the same tokens on the bundled models") {
  // The fp16 model computes in f32 on CPUs without fp16 arithmetic: its
  // tied output projection is on the own f32 GEMM, so set_greedy_scores
  // (false) builds the arg-max shortcut there; the int8 model has none.
  const std::vector<Ids> sources = first_sources(200);
  for (const char* path : kBundledModels) {
    CAPTURE(std::string(path));
    for (size_t threads : {size_t{1}, size_t{2}}) {
      CAPTURE(threads);
      Loaded loaded = load(path, threads, 16, 1);
      const std::vector<Ids> one = translate_all(*loaded.translator, sources, 1, 1);
      const std::vector<Ids> batched = translate_all(*loaded.translator, sources, 16, 1);
      REQUIRE(loaded.translator->set_greedy_scores(false).is_ok());
      const bool f32 = std::string(loaded.translator->compute_path()).rfind("f32", 0) == 0;
      MESSAGE("arg-max shortcut: " << loaded.translator->greedy_shortcut_bytes() << " bytes");
      if (f32 && edgemt::kernels::f32::fast_gemm_kernel() != nullptr) {
        CHECK(loaded.translator->greedy_shortcut_bytes() > 0);
      }
      CHECK(count_equal(one, translate_all(*loaded.translator, sources, 1, 1)) == sources.size());
      CHECK(count_equal(batched, translate_all(*loaded.translator, sources, 16, 1)) ==
            sources.size());
    }
  }
}

TEST_CASE("fp16 greedy matches PyTorch on the fp16-rounded weights") {
  const std::vector<Ids> expected = read_id_lines(reference_path("torch_fp16_greedy.ids"));
  REQUIRE_MESSAGE(expected.size() == 1000, "models/reference/torch_fp16_greedy.ids missing");
  const std::vector<Ids> sources = first_sources(1000);
  Loaded loaded = load(EDGEMT_BUNDLED_FP16_MODEL, 2, 32, 1);
  const std::vector<Ids> outputs = translate_all(*loaded.translator, sources, 32, 1);
  const size_t equal = count_equal(outputs, expected);
  MESSAGE("fp16 greedy identical to the PyTorch reference: " << equal << " / 1000");
  CHECK(equal >= 995);
}

TEST_CASE("int8 greedy matches PyTorch's int8 reference and agrees with fp32") {
  // torch_int8_greedy: PyTorch on the int8 file's weights (q·scale) with every
  // projection input quantized per row, in float32. edgemt sums the same
  // integers exactly, so it differs only where float rounding moves an
  // activation across a rounding boundary or two logits are near-tied.
  const std::vector<Ids> int8_reference = read_id_lines(reference_path("torch_int8_greedy.ids"));
  const std::vector<Ids> fp32_reference = read_id_lines(reference_path("torch_fp32_greedy.ids"));
  REQUIRE(int8_reference.size() == 1000);
  REQUIRE(fp32_reference.size() == 1000);
  const std::vector<Ids> sources = first_sources(1000);
  Loaded loaded = load(EDGEMT_BUNDLED_MODEL, 2, 32, 1);
  const std::vector<Ids> outputs = translate_all(*loaded.translator, sources, 32, 1);
  const size_t same_int8 = count_equal(outputs, int8_reference);
  const size_t same_fp32 = count_equal(outputs, fp32_reference);
  MESSAGE("int8 greedy identical to PyTorch int8: " << same_int8 << " / 1000, to PyTorch fp32: "
                                                    << same_fp32 << " / 1000");
  CHECK(same_int8 >= 960);   // measured 982 (the reference is float32 PyTorch, not bits)
  // Issue 39's quality guard for the bundled file: measured 910 (827 with
  // the narrow codes of issue 17, 888 with full codes and nearest rounding,
  // 912 calibrated in float32 before calibration moved to float64).
  CHECK(same_fp32 >= 895);
}

TEST_CASE("beam output holds no EOS bos or pad") {
  const std::vector<Ids> sources = first_sources(16);
  Loaded loaded = load(EDGEMT_BUNDLED_MODEL, 1, 16, 4);
  const std::vector<Ids> beam = translate_all(*loaded.translator, sources, 16, 4);
  for (const Ids& ids : beam) {
    CHECK(!ids.empty());
    for (int32_t id : ids) {
      CHECK(id != loaded.model->special_tokens().eos);
      CHECK(id != loaded.model->special_tokens().pad);
      CHECK(id != loaded.model->special_tokens().bos);
    }
  }
}

TEST_CASE("translate rejects bad requests with a clear status") {
  std::unique_ptr<edgemt::Model> model;
  REQUIRE(edgemt::Model::load(EDGEMT_BUNDLED_MODEL, &model).is_ok());
  std::unique_ptr<edgemt::Translator> translator;
  REQUIRE(edgemt::Translator::create(*model, {}, &translator).is_ok());
  Ids source = {9, 21, 6, 4, 3};
  Ids buffer(64);
  edgemt::TokenSpan span{source.data(), source.size()};
  edgemt::Translation result;
  result.tokens = buffer.data();
  result.capacity = buffer.size();
  edgemt::DecodeOptions options;

  SUBCASE("before prepare") {
    const edgemt::Status status = translator->translate(&span, 1, options, &result);
    CHECK(status.code() == edgemt::StatusCode::kFailedPrecondition);
  }
  edgemt::Limits limits;
  limits.max_batch = 2;
  limits.max_beam = 2;
  limits.max_source_len = 8;
  limits.max_target_len = 64;
  REQUIRE(translator->prepare(limits).is_ok());

  SUBCASE("limits beyond the position table") {
    edgemt::Limits too_long = limits;
    too_long.max_source_len = transformer_config(*model).max_positions + 1;
    CHECK(translator->prepare(too_long).code() == edgemt::StatusCode::kInvalidArgument);
  }
  SUBCASE("limits beyond kMaxBatch and kMaxBeam (no arena size may overflow)") {
    for (size_t huge : {edgemt::kMaxBatch + 1, size_t{1} << 40, SIZE_MAX}) {
      edgemt::Limits batch = limits;
      batch.max_batch = huge;
      edgemt::Limits beam = limits;
      beam.max_beam = huge;
      size_t bytes = 0;
      CHECK(translator->arena_bytes(batch, &bytes).code() == edgemt::StatusCode::kInvalidArgument);
      CHECK(translator->prepare(beam).code() == edgemt::StatusCode::kInvalidArgument);
    }
    edgemt::Limits most = limits;
    most.max_batch = edgemt::kMaxBatch;
    most.max_beam = edgemt::kMaxBeam;
    size_t bytes = 0;
    CHECK(translator->arena_bytes(most, &bytes).is_ok());
    CHECK(bytes > 0);
  }
  SUBCASE("source longer than the prepared limit") {
    Ids long_source(9, 6);
    long_source.back() = 3;
    edgemt::TokenSpan long_span{long_source.data(), long_source.size()};
    const edgemt::Status status = translator->translate(&long_span, 1, options, &result);
    CHECK(status.code() == edgemt::StatusCode::kOutOfRange);
    CHECK(std::string(status.message()).find("9 tokens") != std::string::npos);
  }
  SUBCASE("empty source") {
    edgemt::TokenSpan empty{source.data(), 0};
    CHECK(translator->translate(&empty, 1, options, &result).code() ==
          edgemt::StatusCode::kInvalidArgument);
  }
  SUBCASE("id outside the vocabulary") {
    source[1] = static_cast<int32_t>(transformer_config(*model).vocab_size);
    CHECK(translator->translate(&span, 1, options, &result).code() ==
          edgemt::StatusCode::kInvalidArgument);
    source[1] = -1;
    CHECK(translator->translate(&span, 1, options, &result).code() ==
          edgemt::StatusCode::kInvalidArgument);
  }
  SUBCASE("batch and beam over the limits") {
    edgemt::TokenSpan spans[3] = {span, span, span};
    edgemt::Translation results[3] = {result, result, result};
    CHECK(translator->translate(spans, 3, options, results).code() ==
          edgemt::StatusCode::kInvalidArgument);
    options.beam_size = 3;
    CHECK(translator->translate(&span, 1, options, &result).code() ==
          edgemt::StatusCode::kInvalidArgument);
  }
  SUBCASE("result buffer smaller than the possible output") {
    result.capacity = 4;
    CHECK(translator->translate(&span, 1, options, &result).code() ==
          edgemt::StatusCode::kInvalidArgument);
  }
  SUBCASE("a prepare() that fails leaves the previous one in place") {
    // Once, planning for the failed call overwrote the prepared buffers'
    // pointers, and the next translate() ran on null pointers.
    REQUIRE(translator->translate(&span, 1, options, &result).is_ok());
    const Ids before(result.tokens, result.tokens + result.length);
    edgemt::Limits bigger = limits;
    bigger.max_batch = 4;
    size_t bytes = 0;
    REQUIRE(translator->arena_bytes(bigger, &bytes).is_ok());
    void* small = std::aligned_alloc(64, 64 * 16);
    REQUIRE(small != nullptr);
    CHECK(translator->prepare(bigger, small, 64 * 16).code() == edgemt::StatusCode::kOutOfMemory);
    CHECK(translator->prepare(bigger, nullptr, bytes).code() == edgemt::StatusCode::kInvalidArgument);
    edgemt::Limits too_long = limits;
    too_long.max_source_len = transformer_config(*model).max_positions + 1;
    CHECK(translator->prepare(too_long).code() == edgemt::StatusCode::kInvalidArgument);
    std::free(small);
    CHECK(translator->limits().max_batch == limits.max_batch);
    result.length = 0;
    REQUIRE(translator->translate(&span, 1, options, &result).is_ok());
    CHECK(Ids(result.tokens, result.tokens + result.length) == before);
  }
  SUBCASE("a valid request still works after rejected ones") {
    const edgemt::Status status = translator->translate(&span, 1, options, &result);
    CHECK(status.is_ok());
    CHECK(result.length > 0);
  }
}

TEST_CASE("the arena shares memory between buffers never live together") {
  // Guards the lifetime plan (models/transformer/workspace.h) against a buffer given a
  // longer life than it needs: the decoder's caches and the encoder's
  // temporaries must share. The floor is what decoding holds at once: the
  // cross-attention K | V of every layer and the self-attention K/V caches.
  std::unique_ptr<edgemt::Model> model;
  REQUIRE(edgemt::Model::load(EDGEMT_BUNDLED_MODEL, &model).is_ok());
  std::unique_ptr<edgemt::Translator> translator;
  REQUIRE(edgemt::Translator::create(*model, edgemt::TranslatorOptions(), &translator).is_ok());
  const edgemt::transformer::TransformerConfig& c = transformer_config(*model);
  struct Case {
    size_t batch, beam;
    double at_most;  // of the unshared size
  };
  for (const Case& k : {Case{16, 1, 0.53}, Case{32, 4, 0.75}}) {
    CAPTURE(k.batch);
    CAPTURE(k.beam);
    edgemt::Limits limits;
    limits.max_batch = k.batch;
    limits.max_beam = k.beam;
    limits.max_source_len = limits.max_target_len = 128;
    edgemt::ArenaPlan plan;
    REQUIRE(translator->arena_plan(limits, &plan).is_ok());
    size_t bytes = 0;
    REQUIRE(translator->arena_bytes(limits, &bytes).is_ok());
    CHECK(bytes == plan.bytes);
    const double floor = 4.0 * c.decoder_layers * c.d_model *
                         (2.0 * k.batch * 128 + 2.0 * k.batch * k.beam * 128);
    CHECK(static_cast<double>(plan.bytes) >= floor);
    CHECK(static_cast<double>(plan.bytes) <= k.at_most * static_cast<double>(plan.unshared_bytes));
    MESSAGE("arena " << plan.bytes / 1048576.0 << " MiB of " << plan.unshared_bytes / 1048576.0
                     << " MiB unshared, " << plan.buffers << " buffers");
  }
}
