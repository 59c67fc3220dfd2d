// Translator with a lexical shortlist on tiny ModelBuilder models: each
// greedy token is the arg-max of the full logits over the batch's
// candidates (Marian's set, computed here with std::set), and its score the
// log-softmax over them; for f32 (packed, or unpacked with the arg-max
// shortcut built, over every column or the gathered candidates), int8, 1
// and 2 threads, and a candidate set too large to gather (every logit
// computed, the candidates kept; an f32 projection left in the file
// instead gathers any set). Beam search stays inside the candidates,
// and with the shortlist off a file translates as the same file without
// one.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <vector>

#include "edgemt/model.h"
#include "edgemt/translator.h"
#include "support/kernel_testing.h"
#include "support/model_builder.h"

namespace edgemt {
namespace {

using testing::ModelBuilder;
using Ids = std::vector<int32_t>;

struct Case {
  DType dtype = DType::kF32;
  size_t threads = 1;
  bool greedy_scores = true;  // false: the f32 projection stays unpacked
  uint32_t vocab = 96;
  uint32_t first = 4;         // pad, unk, bos, eos
  size_t d_model = 16;        // 128 and more: greedy without scores takes the
                              // arg-max shortcut over the gathered candidates
};

// Lists of up to 6 ids for every source id, seeded.
testing::BuilderShortlist random_shortlist(uint32_t vocab, uint32_t first, uint32_t seed) {
  testing::Random rng(seed);
  testing::BuilderShortlist list;
  list.first = first;
  list.best = 6;
  list.add_source_ids = true;
  list.offsets.push_back(0);
  for (uint32_t s = 0; s < vocab; ++s) {
    std::set<uint32_t> ids;
    const size_t count = rng.index(0, 6);
    while (ids.size() < count) ids.insert(static_cast<uint32_t>(rng.index(0, vocab - 1)));
    list.targets.insert(list.targets.end(), ids.begin(), ids.end());
    list.offsets.push_back(static_cast<uint32_t>(list.targets.size()));
  }
  return list;
}

ModelBuilder builder_for(const Case& c, bool with_shortlist) {
  transformer::TransformerConfig config = testing::tiny_config();
  config.d_model = c.d_model;
  config.heads = 2;
  config.ffn_dim = 24;
  config.vocab_size = c.vocab;
  config.max_positions = 24;
  config.output_bias = true;
  config.tied_output = false;
  ModelBuilder builder(config, c.dtype, 11);
  if (with_shortlist) builder.shortlist = random_shortlist(c.vocab, c.first, 12);
  return builder;
}

struct Opened {
  std::unique_ptr<testing::TempFile> file;
  std::unique_ptr<Model> model;
  std::unique_ptr<Translator> translator;
};

Opened open(const ModelBuilder& builder, const Case& c, bool use_shortlist = true) {
  Opened o;
  o.file = std::make_unique<testing::TempFile>(builder.build());
  const Status loaded = Model::load(o.file->path().c_str(), &o.model);
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
  TranslatorOptions options;
  options.threads = c.threads;
  options.min_parallel_nanoseconds = 0;  // split every call: the threaded paths
  REQUIRE(Translator::create(*o.model, options, &o.translator).is_ok());
  REQUIRE(o.translator->set_greedy_scores(c.greedy_scores).is_ok());
  if (o.model->shortlist() != nullptr) REQUIRE(o.translator->set_shortlist(use_shortlist).is_ok());
  Limits limits;
  limits.max_batch = 4;
  limits.max_beam = 3;
  limits.max_source_len = 16;
  limits.max_target_len = 16;
  REQUIRE(o.translator->prepare(limits).is_ok());
  return o;
}

std::vector<Ids> sources_for(uint32_t vocab, uint32_t seed) {
  testing::Random rng(seed);
  std::vector<Ids> sources(3);
  for (Ids& s : sources) {
    s.resize(rng.index(3, 8));
    for (int32_t& id : s) id = static_cast<int32_t>(rng.index(4, vocab - 1));
    s.push_back(3);  // EOS
  }
  return sources;
}

struct Outputs {
  std::vector<Ids> tokens;
  std::vector<float> scores;
};

Outputs translate(Translator& translator, const std::vector<Ids>& sources, size_t beam) {
  std::vector<TokenSpan> spans;
  std::vector<Ids> buffers(sources.size(), Ids(16));
  std::vector<Translation> results(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    spans.push_back({sources[i].data(), sources[i].size()});
    results[i].tokens = buffers[i].data();
    results[i].capacity = buffers[i].size();
  }
  DecodeOptions options;
  options.beam_size = beam;
  options.max_len_a = 0.0f;
  options.max_len_b = 12.0f;
  const Status status = translator.translate(spans.data(), spans.size(), options, results.data());
  REQUIRE_MESSAGE(status.is_ok(), status.message());
  Outputs out;
  for (const Translation& r : results) {
    REQUIRE(r.status == StatusCode::kOk);
    out.tokens.emplace_back(r.tokens, r.tokens + r.length);
    out.scores.push_back(r.score);
  }
  return out;
}

// Marian's candidate set of the batch (search/shortlist.h states it).
std::set<int32_t> candidates(const testing::BuilderShortlist& list,
                             const std::vector<Ids>& sources, uint32_t vocab) {
  std::set<int32_t> chosen;
  for (uint32_t id = 0; id < list.first; ++id) chosen.insert(static_cast<int32_t>(id));
  for (const Ids& source : sources) {
    for (int32_t id : source) {
      for (uint32_t i = list.offsets[id]; i < list.offsets[id + 1]; ++i) {
        chosen.insert(static_cast<int32_t>(list.targets[i]));
      }
      if (list.add_source_ids) chosen.insert(id);
    }
  }
  chosen.insert(3);  // EOS
  for (uint32_t id = list.first; chosen.size() % 8 != 0 && id < vocab; ++id) {
    chosen.insert(static_cast<int32_t>(id));
  }
  return chosen;
}

// Each greedy token against the full logits (force_decode) restricted to
// the candidates: the arg-max (pad and bos banned, lowest id on ties), and
// the score the sum of log-softmaxes over the candidates.
void check_greedy(const Case& c) {
  const ModelBuilder builder = builder_for(c, true);
  Opened o = open(builder, c);
  const std::vector<Ids> sources = sources_for(c.vocab, 13);
  const Outputs got = translate(*o.translator, sources, 1);
  const std::set<int32_t> chosen = candidates(*builder.shortlist, sources, c.vocab);
  REQUIRE(chosen.size() < c.vocab);  // the shortlist restricts something
  // Scores on: force_decode's logits are the full rows' bits.
  Case scored = c;
  scored.greedy_scores = true;
  Opened full = open(builder, scored);
  size_t outside_full_argmax = 0;
  for (size_t s = 0; s < sources.size(); ++s) {
    // The result leaves out the EOS that ended it (shorter than max_len_b 12).
    Ids tokens = got.tokens[s];
    if (tokens.size() < 12) tokens.push_back(3);
    std::vector<float> logits(tokens.size() * c.vocab);
    REQUIRE(full.translator
                ->force_decode({sources[s].data(), sources[s].size()},
                               {tokens.data(), tokens.size()}, logits.data())
                .is_ok());
    double score = 0.0;
    for (size_t step = 0; step < tokens.size(); ++step) {
      const float* row = logits.data() + step * c.vocab;
      int32_t best = -1;
      double total = 0.0;
      float top = -INFINITY;
      for (int32_t id : chosen) top = std::max(top, row[id]);
      for (int32_t id : chosen) {
        total += std::exp(static_cast<double>(row[id]) - static_cast<double>(top));
        if (id == 0 || id == 2) continue;  // pad, bos
        if (best < 0 || row[id] > row[best]) best = id;
      }
      CAPTURE(s);
      CAPTURE(step);
      CHECK(tokens[step] == best);
      const int32_t full_best = static_cast<int32_t>(
          std::max_element(row, row + c.vocab) - row);
      outside_full_argmax += chosen.count(full_best) == 0;
      score += static_cast<double>(row[best]) - static_cast<double>(top) - std::log(total);
    }
    if (c.greedy_scores) CHECK(got.scores[s] == doctest::Approx(score).epsilon(1e-4));
  }
  // Random weights: the full vocabulary's choice is often not a candidate,
  // so the test sees the restriction at work.
  CHECK(outside_full_argmax > 0);
}

TEST_CASE("translator/shortlist: greedy picks the best candidate, scored over the candidates") {
  for (DType dtype : {DType::kF32, DType::kI8}) {
    for (size_t threads : {1, 2}) {
      for (bool scores : {true, false}) {
        Case c;
        c.dtype = dtype;
        c.threads = threads;
        c.greedy_scores = scores;
        CAPTURE(static_cast<int>(dtype));
        CAPTURE(threads);
        CAPTURE(scores);
        check_greedy(c);
      }
    }
  }
}

TEST_CASE("translator/shortlist: the arg-max shortcut over the candidates picks the same") {
  // d 128: greedy without scores gathers the candidates' int8 copy beside
  // their f32 pack and proves each step's arg-max from it (OutputHead).
  for (size_t threads : {1, 2}) {
    for (bool scores : {false, true}) {
      Case c;
      c.threads = threads;
      c.greedy_scores = scores;
      c.d_model = 128;
      CAPTURE(threads);
      CAPTURE(scores);
      check_greedy(c);
    }
  }
}

TEST_CASE("translator/shortlist: a candidate set too large to gather gives the same choice") {
  // 3000 first ids of 4096: more than the 2048 columns a translator
  // gathers once, so each step packs the candidates' rows (f32 left
  // unpacked: greedy without scores) or computes every logit and keeps
  // the candidates' (int8). f32 with scores gathers them all (below).
  for (DType dtype : {DType::kF32, DType::kI8}) {
    for (bool scores : {true, false}) {
      Case c;
      c.dtype = dtype;
      c.greedy_scores = scores;
      c.threads = scores ? 1 : 2;
      c.vocab = 4096;
      c.first = 3000;
      check_greedy(c);
    }
  }
}

TEST_CASE("translator/shortlist: a batch of 32 has room for 128 candidates a sentence") {
  // 3000 first ids of 8192 and 32 sentences bring more candidates than a
  // quarter of the vocabulary (2048): the arena holds 4096 gathered columns
  // (128 a sentence, at most half the vocabulary) of f32 pack for the
  // arg-max shortcut, so such a batch keeps the shortcut.
  Case c;
  c.vocab = 8192;
  c.first = 3000;
  c.d_model = 128;
  c.greedy_scores = false;
  const ModelBuilder builder = builder_for(c, true);
  Opened listed = open(builder, c);
  if (listed.translator->greedy_shortcut_bytes() == 0) {
    MESSAGE("the f32 projection is not on the own GEMM on this CPU: nothing is gathered");
    return;
  }
  Opened unlisted = open(builder, c, /*use_shortlist=*/false);
  Limits limits = listed.translator->limits();
  limits.max_batch = 32;
  size_t with = 0;
  size_t without = 0;
  REQUIRE(listed.translator->arena_bytes(limits, &with).is_ok());
  REQUIRE(unlisted.translator->arena_bytes(limits, &without).is_ok());
  CHECK(with >= without + size_t{4096} * c.d_model * sizeof(float));
}

TEST_CASE("translator/shortlist: an f32 projection left in the file gathers any candidate set") {
  // With a shortlist and scores (no shortcut) an f32 projection on the own
  // GEMM is never packed: every logit would come from the file's rows, so
  // the arena holds all the candidates a batch of its limits can bring
  // (here at least the 3000 first ids, more than the 2048 columns planned
  // beside a packed one).
  Case c;
  c.vocab = 4096;
  c.first = 3000;
  const ModelBuilder builder = builder_for(c, true);
  Case shortcut = c;
  shortcut.greedy_scores = false;
  if (open(builder, shortcut).translator->greedy_shortcut_bytes() == 0) {
    MESSAGE("the f32 projection is not on the own GEMM on this CPU: nothing is left unpacked");
    return;
  }
  Opened listed = open(builder, c);
  Opened unlisted = open(builder, c, /*use_shortlist=*/false);
  size_t with = 0;
  size_t without = 0;
  REQUIRE(listed.translator->arena_bytes(listed.translator->limits(), &with).is_ok());
  REQUIRE(unlisted.translator->arena_bytes(unlisted.translator->limits(), &without).is_ok());
  CHECK(with >= without + size_t{3000} * c.d_model * sizeof(float));
  check_greedy(c);
}

TEST_CASE("translator/shortlist: beam search stays in the candidates, the same on 1 and 2 threads") {
  for (DType dtype : {DType::kF32, DType::kI8}) {
    Case c;
    c.dtype = dtype;
    const ModelBuilder builder = builder_for(c, true);
    const std::vector<Ids> sources = sources_for(c.vocab, 14);
    const std::set<int32_t> chosen = candidates(*builder.shortlist, sources, c.vocab);
    Opened one = open(builder, c);
    const Outputs beam = translate(*one.translator, sources, 3);
    for (const Ids& tokens : beam.tokens) {
      for (int32_t id : tokens) CHECK(chosen.count(id) == 1);
    }
    c.threads = 2;
    Opened two = open(builder, c);
    const Outputs again = translate(*two.translator, sources, 3);
    CHECK(again.tokens == beam.tokens);
    CHECK(again.scores == beam.scores);
  }
}

TEST_CASE("translator/shortlist: off, a file translates as the same file without one") {
  for (DType dtype : {DType::kF32, DType::kI8}) {
    Case c;
    c.dtype = dtype;
    const std::vector<Ids> sources = sources_for(c.vocab, 15);
    Opened with = open(builder_for(c, true), c, /*use_shortlist=*/false);
    Opened without = open(builder_for(c, false), c);
    CHECK_FALSE(with.translator->shortlist());
    for (size_t beam : {1, 3}) {
      const Outputs a = translate(*with.translator, sources, beam);
      const Outputs b = translate(*without.translator, sources, beam);
      CHECK(a.tokens == b.tokens);
      CHECK(a.scores == b.scores);
    }
    // And a model without one refuses to use one.
    CHECK(without.translator->set_shortlist(true).code() == StatusCode::kFailedPrecondition);
  }
}

}  // namespace
}  // namespace edgemt
