// Greedy and beam search through the public Translator on tiny ModelBuilder
// models, against a naive beam search written here from the rules of
// tools/edgemt_tools/SEARCH.md, on the double-precision logits of the naive
// ReferenceTransformer (tests/support/reference_transformer.h):
//   - top 2K of (score + log_softmax, pad/bos masked after the log_softmax),
//     ties to the lower flat index h·V + t;
//   - an EOS candidate finishes when its rank < K, is dropped otherwise;
//   - other candidates become live until K are;
//   - stop when K have finished, or after max_len steps (live ones are then
//     finished as they are);
//   - normalized = score / len^alpha (len counts the EOS); the best wins,
//     ties to the earliest finished.
// Beam size 1 is greedy (DecodeOptions), checked against the reference's
// greedy decoding.
//
// The runtime computes in float32 and the reference in double, so a near-tie
// could legitimately flip a choice. Each naive search records its smallest
// decision margin; a mismatch reports it. With the models and sources below
// every margin is above 1e-4 (checked), far above float32 noise (~1e-6).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "edgemt/model.h"
#include "edgemt/translator.h"
#include "support/model_builder.h"
#include "support/reference_transformer.h"
#include "models/transformer/config.h"

namespace edgemt {
namespace {

using testing::ModelBuilder;
using testing::ReferenceTransformer;
using testing::TempFile;

constexpr double kMinMargin = 1e-4;

struct Variant {
  const char* name;
  NormPlacement norm;
  Activation activation;
  DType dtype;
  uint32_t seed;
  float eos_bias;      // added to output.bias[eos]: how soon hypotheses end
  float banned_bias;   // added to output.bias[pad] and [bos]: tempts the search
};

constexpr Variant kVariants[] = {
    {"post-norm relu f32 seed 7", NormPlacement::kPostNorm, Activation::kRelu, DType::kF32, 7,
     0.0f, 0.0f},
    {"post-norm relu f32 seed 7 eos favoured", NormPlacement::kPostNorm, Activation::kRelu,
     DType::kF32, 7, 1.5f, 0.0f},
    {"pre-norm gelu f32 seed 11 pad and bos favoured", NormPlacement::kPreNorm,
     Activation::kGelu, DType::kF32, 11, 1.0f, 6.0f},
    {"post-norm swish f16 seed 6 eos favoured", NormPlacement::kPostNorm, Activation::kSwish,
     DType::kF16, 6, 2.5f, 0.0f},
};

const std::vector<std::vector<int32_t>> kSources = {
    {5, 17, 9, 30, 12, 3}, {7, 3}, {11, 12, 13, 14, 15, 16, 17, 18, 19, 3}, {25, 4, 3}};

struct Fixture {
  std::unique_ptr<TempFile> file;
  std::unique_ptr<Model> model;
  std::unique_ptr<Translator> translator;
};

Fixture make(const Variant& v, size_t threads) {
  TransformerConfig c = testing::tiny_config();
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.d_model = 16;
  c.heads = 4;
  c.ffn_dim = 24;
  c.vocab_size = 40;
  c.max_positions = 32;
  c.norm_placement = v.norm;
  c.activation = v.activation;
  c.encoder_final_norm = c.decoder_final_norm = v.norm == NormPlacement::kPreNorm;
  c.output_bias = true;
  c.embedding_scale = 4.0f;
  ModelBuilder builder(c, v.dtype, v.seed);
  testing::BuilderTensor* bias = builder.find("output.bias");
  REQUIRE(bias != nullptr);
  REQUIRE(bias->values.size() == c.vocab_size);
  bias->values[static_cast<size_t>(builder.special_tokens.eos)] += v.eos_bias;
  bias->values[static_cast<size_t>(builder.special_tokens.pad)] += v.banned_bias;
  bias->values[static_cast<size_t>(builder.special_tokens.bos)] += v.banned_bias;

  Fixture f;
  f.file = std::make_unique<TempFile>(builder.build());
  REQUIRE(f.file->ok());
  const Status loaded = Model::load(f.file->path().c_str(), &f.model);
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
  TranslatorOptions options;
  options.threads = threads;
  options.min_parallel_nanoseconds = 0;  // tiny model: split anyway, to test the threaded kernels
  REQUIRE(Translator::create(*f.model, options, &f.translator).is_ok());
  Limits limits;
  limits.max_batch = 4;
  limits.max_beam = 3;
  limits.max_source_len = 32;
  limits.max_target_len = 32;
  REQUIRE(f.translator->prepare(limits).is_ok());
  return f;
}

size_t max_len_for(size_t source_len, const DecodeOptions& options, size_t max_target_len) {
  const double wanted = std::floor(static_cast<double>(options.max_len_a) *
                                       static_cast<double>(source_len) +
                                   static_cast<double>(options.max_len_b));
  if (wanted >= static_cast<double>(max_target_len)) return max_target_len;
  return wanted < 1.0 ? 1 : static_cast<size_t>(wanted);
}

struct Outcome {
  std::vector<int32_t> tokens;
  double score = 0.0;  // normalized (greedy: the plain log-probability)
  double margin = std::numeric_limits<double>::infinity();  // smallest decision gap
};

std::vector<double> last_log_probs(const ReferenceTransformer& reference,
                                   const std::vector<int32_t>& source,
                                   const std::vector<int32_t>& prefix, size_t vocab) {
  const std::vector<double> all = reference.logits(source, prefix);
  const double* last = all.data() + (prefix.size() - 1) * vocab;
  double m = -HUGE_VAL;
  for (size_t v = 0; v < vocab; ++v) m = std::max(m, last[v]);
  double sum = 0.0;
  for (size_t v = 0; v < vocab; ++v) sum += std::exp(last[v] - m);
  std::vector<double> lp(vocab);
  for (size_t v = 0; v < vocab; ++v) lp[v] = last[v] - m - std::log(sum);
  return lp;
}

// SEARCH.md "Beam search", step by step, with K >= 2.
Outcome naive_beam(const Model& model, const std::vector<int32_t>& source, size_t max_len,
                   size_t K, double alpha) {
  const ReferenceTransformer reference(model);
  const SpecialTokens& special = model.special_tokens();
  const size_t V = transformer_config(model).vocab_size;
  struct Hypothesis {
    std::vector<int32_t> prefix;  // starts with decoder_start
    double score;
  };
  struct Finished {
    std::vector<int32_t> tokens;
    double normalized;
  };
  struct Candidate {
    double score;
    size_t flat;
  };
  Outcome outcome;
  std::vector<Hypothesis> live = {{{special.decoder_start}, 0.0}};
  std::vector<Finished> finished;
  for (size_t step = 0; step < max_len; ++step) {
    std::vector<Candidate> candidates;
    for (size_t h = 0; h < live.size(); ++h) {
      std::vector<double> lp = last_log_probs(reference, source, live[h].prefix, V);
      lp[static_cast<size_t>(special.pad)] = -HUGE_VAL;  // masked after the log_softmax
      lp[static_cast<size_t>(special.bos)] = -HUGE_VAL;
      for (size_t t = 0; t < V; ++t) {
        if (!std::isinf(lp[t])) candidates.push_back({live[h].score + lp[t], h * V + t});
      }
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.score != b.score ? a.score > b.score : a.flat < b.flat;
    });
    // Every order decision among the first 2K + 1 candidates matters.
    for (size_t r = 0; r + 1 < candidates.size() && r < 2 * K; ++r) {
      outcome.margin = std::min(outcome.margin, candidates[r].score - candidates[r + 1].score);
    }
    if (candidates.size() > 2 * K) candidates.resize(2 * K);
    std::vector<Hypothesis> next;
    for (size_t rank = 0; rank < candidates.size(); ++rank) {
      const size_t h = candidates[rank].flat / V;
      const auto t = static_cast<int32_t>(candidates[rank].flat % V);
      if (t == special.eos) {
        if (rank < K) {
          std::vector<int32_t> tokens(live[h].prefix.begin() + 1, live[h].prefix.end());
          finished.push_back(
              {tokens, candidates[rank].score / std::pow(static_cast<double>(step + 1), alpha)});
        }
      } else if (next.size() < K) {
        std::vector<int32_t> prefix = live[h].prefix;
        prefix.push_back(t);
        next.push_back({prefix, candidates[rank].score});
      }
    }
    if (finished.size() >= K) {
      live.clear();
      break;
    }
    live = next;
  }
  for (const Hypothesis& h : live) {  // max_len steps ran
    finished.push_back({std::vector<int32_t>(h.prefix.begin() + 1, h.prefix.end()),
                        h.score / std::pow(static_cast<double>(max_len), alpha)});
  }
  REQUIRE(!finished.empty());
  size_t best = 0;
  for (size_t i = 1; i < finished.size(); ++i) {
    if (finished[i].normalized > finished[best].normalized) best = i;
  }
  for (size_t i = 0; i < finished.size(); ++i) {
    if (i != best && finished[i].tokens != finished[best].tokens) {
      outcome.margin =
          std::min(outcome.margin, std::fabs(finished[best].normalized - finished[i].normalized));
    }
  }
  outcome.tokens = finished[best].tokens;
  outcome.score = finished[best].normalized;
  return outcome;
}

// SEARCH.md "Greedy", with the sum of log-probabilities as the score.
Outcome naive_greedy(const Model& model, const std::vector<int32_t>& source, size_t max_len) {
  const ReferenceTransformer reference(model);
  const SpecialTokens& special = model.special_tokens();
  const size_t V = transformer_config(model).vocab_size;
  Outcome outcome;
  std::vector<int32_t> prefix = {special.decoder_start};
  for (size_t step = 0; step < max_len; ++step) {
    const std::vector<double> lp = last_log_probs(reference, source, prefix, V);
    size_t best = V;
    for (size_t t = 0; t < V; ++t) {
      if (static_cast<int32_t>(t) == special.pad || static_cast<int32_t>(t) == special.bos) continue;
      if (best == V || lp[t] > lp[best]) best = t;
    }
    for (size_t t = 0; t < V; ++t) {
      if (t == best || static_cast<int32_t>(t) == special.pad ||
          static_cast<int32_t>(t) == special.bos) {
        continue;
      }
      outcome.margin = std::min(outcome.margin, lp[best] - lp[t]);
    }
    outcome.score += lp[best];
    if (static_cast<int32_t>(best) == special.eos) break;
    prefix.push_back(static_cast<int32_t>(best));
  }
  outcome.tokens.assign(prefix.begin() + 1, prefix.end());
  return outcome;
}

struct Run {
  std::vector<std::vector<int32_t>> tokens;
  std::vector<float> scores;
  std::vector<StatusCode> status;
  std::vector<std::string> errors;
};

// Translates `sources` in one call.
Run translate(Translator* translator, const std::vector<std::vector<int32_t>>& sources,
              const DecodeOptions& options) {
  std::vector<TokenSpan> spans;
  std::vector<std::vector<int32_t>> buffers(sources.size(), std::vector<int32_t>(32, -7));
  std::vector<Translation> results(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    spans.push_back({sources[i].data(), sources[i].size()});
    results[i].tokens = buffers[i].data();
    results[i].capacity = buffers[i].size();
  }
  const Status status = translator->translate(spans.data(), spans.size(), options, results.data());
  REQUIRE_MESSAGE(status.is_ok(), status.message());
  Run run;
  for (size_t i = 0; i < sources.size(); ++i) {
    run.tokens.emplace_back(results[i].tokens, results[i].tokens + results[i].length);
    run.scores.push_back(results[i].score);
    run.status.push_back(results[i].status);
    REQUIRE(results[i].error != nullptr);
    run.errors.emplace_back(results[i].error);
  }
  return run;
}

bool has_special(const std::vector<int32_t>& tokens, const SpecialTokens& special, size_t vocab) {
  for (int32_t t : tokens) {
    if (t == special.pad || t == special.bos || t == special.eos) return true;
    if (t < 0 || static_cast<size_t>(t) >= vocab) return true;
  }
  return false;
}

// On CPUs with fp16 arithmetic f16 models run XNNPACK's f16 GEMMs, whose
// sums round to half: logits move by ~1e-3, past this file's margins (1e-4),
// and the search logic under test is the same on every path. Those variants
// are checked on the widened-f32 path (x86, Cortex-A53) and skipped here.
bool skip_native_f16(const Fixture& f) {
  if (std::string(f.translator->compute_path()).rfind("f16", 0) != 0) return false;
  MESSAGE("skipped: f16 model on XNNPACK's f16 GEMMs (logits not within the test's margins)");
  return true;
}

std::string show(const std::vector<int32_t>& tokens) {
  std::string s;
  for (int32_t t : tokens) s += std::to_string(t) + " ";
  return s;
}

TEST_CASE("search: beam 1 is greedy and matches the naive greedy decoding") {
  for (const Variant& v : kVariants) {
    CAPTURE(std::string(v.name));
    Fixture f = make(v, 1);
    if (skip_native_f16(f)) continue;
    for (float alpha : {0.6f, 1.0f}) {
      DecodeOptions options;
      options.beam_size = 1;
      options.length_penalty = alpha;  // has no effect on greedy
      options.max_len_a = 1.0f;
      options.max_len_b = 3.0f;
      const Run run = translate(f.translator.get(), kSources, options);
      for (size_t i = 0; i < kSources.size(); ++i) {
        CAPTURE(i);
        const size_t max_len = max_len_for(kSources[i].size(), options, 32);
        const Outcome naive = naive_greedy(*f.model, kSources[i], max_len);
        CHECK(naive.margin > kMinMargin);
        CHECK_MESSAGE(run.tokens[i] == naive.tokens,
                      "edgemt: " << show(run.tokens[i]) << " naive: " << show(naive.tokens)
                                 << " margin " << naive.margin);
        CHECK(run.tokens[i] ==
              ReferenceTransformer(*f.model).greedy(kSources[i], max_len));
        CHECK(std::fabs(static_cast<double>(run.scores[i]) - naive.score) <
              1e-4 * (1.0 + std::fabs(naive.score)));
      }
    }
  }
}

TEST_CASE("search: beam 2 and 3 with length penalties 0.6 and 1.0 match the naive beam search") {
  size_t eos_finished = 0;  // outputs shorter than max_len: an EOS won
  size_t not_greedy = 0;    // beam found something other than the greedy output
  size_t total = 0;
  for (const Variant& v : kVariants) {
    CAPTURE(std::string(v.name));
    Fixture f = make(v, 2);
    if (skip_native_f16(f)) continue;
    for (size_t beam : {size_t{2}, size_t{3}}) {
      for (float alpha : {0.6f, 1.0f}) {
        CAPTURE(beam);
        CAPTURE(alpha);
        DecodeOptions options;
        options.beam_size = beam;
        options.length_penalty = alpha;
        options.max_len_a = 1.0f;
        options.max_len_b = 3.0f;
        // All sources in one batch, and each alone: the same outputs.
        const Run batched = translate(f.translator.get(), kSources, options);
        for (size_t i = 0; i < kSources.size(); ++i) {
          CAPTURE(i);
          const size_t max_len = max_len_for(kSources[i].size(), options, 32);
          const Outcome naive =
              naive_beam(*f.model, kSources[i], max_len, beam, static_cast<double>(alpha));
          CHECK(naive.margin > kMinMargin);
          CHECK_MESSAGE(batched.tokens[i] == naive.tokens,
                        "edgemt: " << show(batched.tokens[i]) << " naive: " << show(naive.tokens)
                                   << " margin " << naive.margin);
          CHECK(std::fabs(static_cast<double>(batched.scores[i]) - naive.score) <
                1e-4 * (1.0 + std::fabs(naive.score)));
          const Run alone = translate(f.translator.get(), {kSources[i]}, options);
          CHECK(alone.tokens[0] == batched.tokens[i]);
          CHECK(alone.scores[0] == batched.scores[i]);
          ++total;
          if (naive.tokens.size() < max_len) ++eos_finished;
          if (naive.tokens != naive_greedy(*f.model, kSources[i], max_len).tokens) ++not_greedy;
        }
      }
    }
  }
  // The variants exercise both endings (EOS and running out of length), and
  // beam search does find other outputs than greedy.
  CHECK(eos_finished > 0);
  CHECK(eos_finished < total);
  CHECK(not_greedy > 0);
}

TEST_CASE("search: outputs never contain pad bos or eos even when they are favoured") {
  for (const Variant& v : kVariants) {
    CAPTURE(std::string(v.name));
    Fixture f = make(v, 1);
    const SpecialTokens& special = f.model->special_tokens();
    for (size_t beam : {size_t{1}, size_t{2}, size_t{3}}) {
      CAPTURE(beam);
      DecodeOptions options;
      options.beam_size = beam;
      options.max_len_a = 2.0f;
      options.max_len_b = 5.0f;
      const Run run = translate(f.translator.get(), kSources, options);
      for (size_t i = 0; i < kSources.size(); ++i) {
        CAPTURE(i);
        CHECK_FALSE(has_special(run.tokens[i], special, transformer_config(*f.model).vocab_size));
        CHECK(run.tokens[i].size() <= max_len_for(kSources[i].size(), options, 32));
      }
    }
  }
}

TEST_CASE("search: max_len of 1 and 2 caps beam and greedy outputs") {
  const Variant& v = kVariants[0];
  Fixture f = make(v, 1);
  for (float b : {0.0f, 1.0f, 2.0f}) {
    for (size_t beam : {size_t{1}, size_t{2}, size_t{3}}) {
      CAPTURE(b);
      CAPTURE(beam);
      DecodeOptions options;
      options.beam_size = beam;
      options.max_len_a = 0.0f;
      options.max_len_b = b;
      const size_t max_len = b < 1.0f ? 1 : static_cast<size_t>(b);
      const Run run = translate(f.translator.get(), kSources, options);
      for (size_t i = 0; i < kSources.size(); ++i) {
        CAPTURE(i);
        const Outcome naive = beam == 1 ? naive_greedy(*f.model, kSources[i], max_len)
                                        : naive_beam(*f.model, kSources[i], max_len, beam, 1.0);
        CHECK(run.tokens[i] == naive.tokens);
        CHECK(run.tokens[i].size() <= max_len);
      }
    }
  }
}

// ---- Sentences whose scores cannot be trusted (issue 13, defects 1-3) -------
//
// The verifier refuses non-finite weights, so these models have finite
// weights whose activations overflow: the search must fail the sentence
// (Translation::status kNumericError), never emit an id outside the
// vocabulary or read a result it did not write, and leave the other
// sentences of the batch exactly as they are when translated alone.

constexpr float kHuge = 3.0e38f;  // finite; a sum of two overflows

// Loads `builder`'s file into a translator (batch 4, beam 3, lengths 32).
Fixture load(const ModelBuilder& builder, size_t threads) {
  Fixture f;
  f.file = std::make_unique<TempFile>(builder.build());
  REQUIRE(f.file->ok());
  const Status loaded = Model::load(f.file->path().c_str(), &f.model);
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
  TranslatorOptions options;
  options.threads = threads;
  options.min_parallel_nanoseconds = 0;
  REQUIRE(Translator::create(*f.model, options, &f.translator).is_ok());
  Limits limits;
  limits.max_batch = 4;
  limits.max_beam = 3;
  limits.max_source_len = 16;
  limits.max_target_len = 16;
  REQUIRE(f.translator->prepare(limits).is_ok());
  return f;
}

void check_failed(const Run& run, size_t i, const char* why) {
  CAPTURE(i);
  CHECK(run.status[i] == StatusCode::kNumericError);
  CHECK(run.tokens[i].empty());
  CHECK(run.scores[i] == 0.0f);
  CHECK(run.errors[i].find(why) != std::string::npos);
}

TEST_CASE("search: a sentence whose activations overflow fails alone, greedy and beam") {
  // Source token 20's embedding is huge: any sentence holding it overflows
  // in the encoder (NaN/inf through attention), the others are untouched.
  ModelBuilder builder(testing::tiny_config(), DType::kF32, 3);
  testing::BuilderTensor* embedding = builder.find("embedding.source");
  REQUIRE(embedding != nullptr);
  const size_t d = builder.config.d_model;
  for (size_t i = 0; i < d; ++i) embedding->values[20 * d + i] = i % 2 == 0 ? kHuge : -kHuge;
  const std::vector<std::vector<int32_t>> sources = {
      {5, 17, 9, 3}, {20, 7, 3}, {11, 12, 13, 3}, {6, 20, 20, 3}};
  for (size_t threads : {size_t{1}, size_t{2}}) {
    Fixture f = load(builder, threads);
    for (size_t beam : {size_t{1}, size_t{3}}) {
      CAPTURE(threads);
      CAPTURE(beam);
      DecodeOptions options;
      options.beam_size = beam;
      const Run batch = translate(f.translator.get(), sources, options);
      for (size_t i : {size_t{1}, size_t{3}}) check_failed(batch, i, "NaN or infinite");
      for (size_t i : {size_t{0}, size_t{2}}) {
        CAPTURE(i);
        CHECK(batch.status[i] == StatusCode::kOk);
        CHECK(batch.errors[i].empty());
        CHECK_FALSE(batch.tokens[i].empty());
        CHECK_FALSE(has_special(batch.tokens[i], f.model->special_tokens(), 32));
        const Run alone = translate(f.translator.get(), {sources[i]}, options);
        CHECK(alone.tokens[0] == batch.tokens[i]);
        CHECK(alone.scores[0] == batch.scores[i]);
      }
    }
  }
}

// A pre-norm model whose decoder final norm has weight 0 and bias 1 makes
// every decoder output row all ones, so logits[v] = sum(output.weight[v])
// whatever the input: the output rows choose what the search sees.
ModelBuilder constant_logits_builder(float allowed_row_value, float banned_row_value) {
  TransformerConfig c = testing::tiny_config();
  c.norm_placement = NormPlacement::kPreNorm;
  c.encoder_final_norm = c.decoder_final_norm = true;
  ModelBuilder builder(c, DType::kF32, 5);
  for (float& v : builder.find("decoder.final_norm.weight")->values) v = 0.0f;
  for (float& v : builder.find("decoder.final_norm.bias")->values) v = 1.0f;
  std::vector<float>& output = builder.find("output.weight")->values;
  const size_t d = c.d_model;
  for (size_t v = 0; v < c.vocab_size; ++v) {
    const bool banned = static_cast<int32_t>(v) == builder.special_tokens.pad ||
                        static_cast<int32_t>(v) == builder.special_tokens.bos;
    for (size_t i = 0; i < d; ++i) {
      output[v * d + i] = banned ? banned_row_value : allowed_row_value;
    }
  }
  return builder;
}

TEST_CASE("search: logits that overflow to +inf fail every sentence, greedy and beam") {
  // Every logit is 8 x 3e38 = +inf: log-sum-exp is NaN.
  const ModelBuilder builder = constant_logits_builder(kHuge, kHuge);
  Fixture f = load(builder, 1);
  for (size_t beam : {size_t{1}, size_t{2}, size_t{3}}) {
    CAPTURE(beam);
    DecodeOptions options;
    options.beam_size = beam;
    const Run run = translate(f.translator.get(), kSources, options);
    for (size_t i = 0; i < kSources.size(); ++i) check_failed(run, i, "NaN or infinite");
  }
}

TEST_CASE("search: when only pad and bos have finite scores no token is emitted") {
  // Allowed tokens' logits are 8 x -3e38 = -inf, pad's and bos's are 0: the
  // log-sum-exp is finite, but no allowed candidate is. Greedy used to emit
  // a -inf token; beam search used to end with no finished hypothesis and
  // copy its result from slots never written for the sentence.
  const ModelBuilder builder = constant_logits_builder(-kHuge, 0.0f);
  Fixture f = load(builder, 1);
  for (size_t beam : {size_t{1}, size_t{2}, size_t{3}}) {
    CAPTURE(beam);
    DecodeOptions options;
    options.beam_size = beam;
    const Run run = translate(f.translator.get(), kSources, options);
    for (size_t i = 0; i < kSources.size(); ++i) check_failed(run, i, "finite score");
  }
}

}  // namespace
}  // namespace edgemt
