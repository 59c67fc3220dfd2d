// Greedy and beam search through the public Translator on tiny ModelBuilder
// models, against a naive search written here from the rules of
// tools/edgemt_tools/SEARCH.md, on the double-precision logits of the naive
// ReferenceTransformer (tests/support/reference_transformer.h). Every rule
// set a model file can name (Decoding.rules) is covered; K is the beam size:
//   - candidates: hypothesis score + log_softmax over the whole vocabulary,
//     the file's banned tokens masked after the log_softmax, ordered by
//     score (ties to the lower flat index h·V + t);
//   - edgemt: top 2K; an EOS finishes when its rank < K; others become live
//     until K are; stop when K have finished; normalized = score / L^alpha
//     (L: generated tokens, the EOS counted);
//   - Hugging Face: as edgemt, but only the K best finished are kept; stop
//     when K are kept and the worst of them is at least the step's best
//     candidate normalized at this length; the last step must be EOS;
//   - OpenNMT: top K, every EOS among them finishes, score / (L + 1)^alpha;
//     only the best finished is kept; stop once some step's best was EOS
//     and K have finished (kept or not);
//   - Marian: top K, then top (live count): the beam shrinks as EOS are
//     taken; (score - word_penalty·L) / L^alpha; stop when none is live;
//     max_len rounds a·len + b up;
//   - any rules: after max_len steps the live ones finish as they are; the
//     best normalized wins, ties to the earliest finished.
// Beam size 1 is greedy (DecodeOptions): the arg-max of the allowed tokens
// (Hugging Face: EOS at the last step), the score the plain log-probability.
//
// The runtime computes in float32 and the reference in double, so a near-tie
// could legitimately flip a choice. Each naive search records its smallest
// decision margin; a mismatch reports it. With the edgemt-rules cases below
// every margin is above 1e-4 (checked), far above float32 noise (~1e-6); the
// other rule sets skip the rare near-tie (counted, and required to be rare).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edgemt/model.h"
#include "edgemt/translator.h"
#include "kernels/f32_gemm.h"
#include "support/model_builder.h"
#include "support/reference_transformer.h"
#include "models/transformer/config.h"

using namespace edgemt::transformer;  // the family under test

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
  float unk_bias = 0.0f;  // added to output.bias[unk]
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

// The search rules and banned tokens of a model file: what the runtime reads
// from it and the naive searches below are told directly.
struct Rules {
  SearchRules rules = SearchRules::kEdgemt;
  std::vector<int32_t> banned;  // target ids never emitted
};

// Each framework's usual ban list (SEARCH.md): files without a decoding
// table ban pad and bos; Hugging Face's bad_words_ids hold pad; Marian
// suppresses <unk>; OpenNMT-py bans nothing. So only edgemt's bans bos.
Rules rules_for(SearchRules rules, const SpecialTokens& special) {
  switch (rules) {
    case SearchRules::kHuggingFace: return {rules, {special.pad}};
    case SearchRules::kMarian: return {rules, {special.unk}};
    case SearchRules::kOpenNMT: return {rules, {}};
    case SearchRules::kEdgemt:
      break;
  }
  return {rules, {special.pad, special.bos}};
}

bool is_banned(const Rules& rules, int32_t token) {
  return std::find(rules.banned.begin(), rules.banned.end(), token) != rules.banned.end();
}

struct Fixture {
  std::unique_ptr<TempFile> file;
  std::unique_ptr<Model> model;
  std::unique_ptr<Translator> translator;
  Rules rules;  // those the file holds (no decoding table: edgemt's)
};

// Writes `builder`'s file, loads it and prepares a translator on `threads`
// threads (every call split, to test the threaded kernels on a tiny model)
// for 4 sentences, beam 3 and `max_len` tokens each way. greedy_scores is
// set before prepare(): false leaves a projection on the own f32 GEMM
// unpacked.
void open_fixture(const ModelBuilder& builder, size_t threads, bool greedy_scores, size_t max_len,
                  Fixture* f) {
  f->file = std::make_unique<TempFile>(builder.build());
  REQUIRE(f->file->ok());
  const Status loaded = Model::load(f->file->path().c_str(), &f->model);
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.message());
  TranslatorOptions options;
  options.threads = threads;
  options.min_parallel_nanoseconds = 0;
  REQUIRE(Translator::create(*f->model, options, &f->translator).is_ok());
  REQUIRE(f->translator->set_greedy_scores(greedy_scores).is_ok());
  Limits limits;
  limits.max_batch = 4;
  limits.max_beam = 3;
  limits.max_source_len = max_len;
  limits.max_target_len = max_len;
  REQUIRE(f->translator->prepare(limits).is_ok());
}

// `rules` unset: a file without a decoding table (edgemt's rules, pad and
// bos banned); set: a version-3 decoding table with its rules and the ban
// list of rules_for().
Fixture make(const Variant& v, size_t threads,
             std::optional<SearchRules> rules = std::nullopt, bool greedy_scores = true) {
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
  bias->values[static_cast<size_t>(builder.special_tokens.unk)] += v.unk_bias;

  Fixture f;
  f.rules = rules_for(rules.value_or(SearchRules::kEdgemt), builder.special_tokens);
  if (rules) {
    testing::BuilderDecoding decoding;
    decoding.rules = *rules;
    decoding.banned_tokens = f.rules.banned;
    builder.decoding = decoding;
  }
  open_fixture(builder, threads, greedy_scores, 32, &f);
  REQUIRE(f.model->decoding().rules == f.rules.rules);
  return f;
}

// floor(a·len + b) in double (Marian: ceil), at least 1, at most the limit.
size_t max_len_for(size_t source_len, const DecodeOptions& options, size_t max_target_len,
                   SearchRules rules = SearchRules::kEdgemt) {
  // Marian takes the product in float32 (1.2f · 5 = 6, in double 6.0000002).
  const double product =
      rules == SearchRules::kMarian
          ? static_cast<double>(options.max_len_a * static_cast<float>(source_len))
          : static_cast<double>(options.max_len_a) * static_cast<double>(source_len);
  const double raw = product + static_cast<double>(options.max_len_b);
  const double wanted = rules == SearchRules::kMarian ? std::ceil(raw) : std::floor(raw);
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

// The score a finished hypothesis of log-probability `score` competes with,
// `length` generated tokens (the EOS counted) long.
double normalized(const Rules& rules, double score, size_t length, double alpha,
                  double word_penalty) {
  const auto L = static_cast<double>(length);
  switch (rules.rules) {
    case SearchRules::kOpenNMT: return score / std::pow(L + 1.0, alpha);  // + the <s>
    case SearchRules::kMarian: return (score - word_penalty * L) / std::pow(L, alpha);
    case SearchRules::kEdgemt:
    case SearchRules::kHuggingFace:
      break;
  }
  return score / std::pow(L, alpha);
}

// Beam search (K >= 2) under `rules`, step by step, as the header comment
// states them.
Outcome naive_beam(const Model& model, const std::vector<int32_t>& source, const Rules& rules,
                   size_t max_len, size_t K, double alpha, double word_penalty = 0.0) {
  const ReferenceTransformer reference(model);
  const SpecialTokens& special = model.special_tokens();
  const size_t V = transformer_config(model).vocab_size;
  const SearchRules r = rules.rules;
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
  std::vector<Finished> finished;
  size_t finished_total = 0;  // kept or not (OpenNMT's stopping test)
  bool best_ended = false;    // OpenNMT: some step's best candidate was EOS
  // How many finished hypotheses the rules keep: Hugging Face the K best,
  // OpenNMT the best, the others all.
  const size_t room = r == SearchRules::kHuggingFace ? K
                      : r == SearchRules::kOpenNMT   ? 1
                                                     : std::numeric_limits<size_t>::max();
  auto add_finished = [&](std::vector<int32_t> tokens, double score) {
    ++finished_total;
    finished.push_back({std::move(tokens), score});
    if (finished.size() <= room) return;
    // Best first; stable, so a newcomer only displaces a strictly worse one.
    std::stable_sort(finished.begin(), finished.end(), [](const Finished& a, const Finished& b) {
      return a.normalized > b.normalized;
    });
    outcome.margin = std::min(
        outcome.margin, finished[room - 1].normalized - finished[room].normalized);
    finished.resize(room);
  };

  std::vector<Hypothesis> live = {{{special.decoder_start}, 0.0}};
  for (size_t step = 0; step < max_len; ++step) {
    // Hugging Face's forced_eos_token_id: the last step can only end.
    const bool forced_eos = r == SearchRules::kHuggingFace && step + 1 == max_len;
    std::vector<Candidate> candidates;
    for (size_t h = 0; h < live.size(); ++h) {
      std::vector<double> lp = last_log_probs(reference, source, live[h].prefix, V);
      for (int32_t t : rules.banned) lp[static_cast<size_t>(t)] = -HUGE_VAL;  // after log_softmax
      for (size_t t = 0; t < V; ++t) {
        if (forced_eos && static_cast<int32_t>(t) != special.eos) lp[t] = -HUGE_VAL;
      }
      for (size_t t = 0; t < V; ++t) {
        if (!std::isinf(lp[t])) candidates.push_back({live[h].score + lp[t], h * V + t});
      }
    }
    REQUIRE(!candidates.empty());
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.score != b.score ? a.score > b.score : a.flat < b.flat;
    });
    // How many candidates the rules read: 2K; OpenNMT K; Marian K from the
    // start hypothesis, then one per live hypothesis.
    size_t read = 2 * K;
    if (r == SearchRules::kOpenNMT) read = K;
    if (r == SearchRules::kMarian) read = step == 0 ? K : live.size();
    // Every order decision among the first read + 1 candidates matters.
    for (size_t i = 0; i + 1 < candidates.size() && i < read; ++i) {
      outcome.margin = std::min(outcome.margin, candidates[i].score - candidates[i + 1].score);
    }
    if (candidates.size() > read) candidates.resize(read);

    // edgemt and Hugging Face finish an EOS only in the top K.
    const bool eos_rank_limited = r == SearchRules::kEdgemt || r == SearchRules::kHuggingFace;
    std::vector<Hypothesis> next;
    for (size_t rank = 0; rank < candidates.size(); ++rank) {
      const size_t h = candidates[rank].flat / V;
      const auto t = static_cast<int32_t>(candidates[rank].flat % V);
      if (t == special.eos) {
        if (!eos_rank_limited || rank < K) {
          add_finished(std::vector<int32_t>(live[h].prefix.begin() + 1, live[h].prefix.end()),
                       normalized(rules, candidates[rank].score, step + 1, alpha, word_penalty));
        }
      } else if (next.size() < K) {
        std::vector<int32_t> prefix = live[h].prefix;
        prefix.push_back(t);
        next.push_back({prefix, candidates[rank].score});
      }
    }

    bool done = next.empty();
    switch (r) {
      case SearchRules::kEdgemt:
        done = done || finished.size() >= K;
        break;
      case SearchRules::kHuggingFace:
        if (finished.size() >= K) {
          double worst = finished[0].normalized;
          for (const Finished& f : finished) worst = std::min(worst, f.normalized);
          const double best_now =
              normalized(rules, candidates[0].score, step + 1, alpha, word_penalty);
          // Equal exactly when the worst kept is this step's best candidate
          // (an EOS), computed alike on both sides: no near-tie then.
          if (worst != best_now) outcome.margin = std::min(outcome.margin, std::fabs(worst - best_now));
          done = done || worst >= best_now;
        }
        break;
      case SearchRules::kOpenNMT:
        best_ended = best_ended || static_cast<int32_t>(candidates[0].flat % V) == special.eos;
        done = done || (best_ended && finished_total >= K);
        break;
      case SearchRules::kMarian:
        break;  // only when none is live
    }
    live = done ? std::vector<Hypothesis>() : next;
    if (done) break;
  }
  for (const Hypothesis& h : live) {  // max_len steps ran
    add_finished(std::vector<int32_t>(h.prefix.begin() + 1, h.prefix.end()),
                 normalized(rules, h.score, max_len, alpha, word_penalty));
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

// The edgemt rules of a file without a decoding table.
Outcome naive_beam(const Model& model, const std::vector<int32_t>& source, size_t max_len,
                   size_t K, double alpha) {
  return naive_beam(model, source, rules_for(SearchRules::kEdgemt, model.special_tokens()),
                    max_len, K, alpha);
}

// SEARCH.md "Greedy", with the sum of log-probabilities as the score.
Outcome naive_greedy(const Model& model, const std::vector<int32_t>& source, const Rules& rules,
                     size_t max_len) {
  const ReferenceTransformer reference(model);
  const SpecialTokens& special = model.special_tokens();
  const size_t V = transformer_config(model).vocab_size;
  Outcome outcome;
  std::vector<int32_t> prefix = {special.decoder_start};
  for (size_t step = 0; step < max_len; ++step) {
    const std::vector<double> lp = last_log_probs(reference, source, prefix, V);
    size_t best = V;
    if (rules.rules == SearchRules::kHuggingFace && step + 1 == max_len) {
      best = static_cast<size_t>(special.eos);  // forced: no decision, no margin
    } else {
      for (size_t t = 0; t < V; ++t) {
        if (is_banned(rules, static_cast<int32_t>(t))) continue;
        if (best == V || lp[t] > lp[best]) best = t;
      }
      for (size_t t = 0; t < V; ++t) {
        if (t == best || is_banned(rules, static_cast<int32_t>(t))) continue;
        outcome.margin = std::min(outcome.margin, lp[best] - lp[t]);
      }
    }
    outcome.score += lp[best];
    if (static_cast<int32_t>(best) == special.eos) break;
    prefix.push_back(static_cast<int32_t>(best));
  }
  outcome.tokens.assign(prefix.begin() + 1, prefix.end());
  return outcome;
}

Outcome naive_greedy(const Model& model, const std::vector<int32_t>& source, size_t max_len) {
  return naive_greedy(model, source, rules_for(SearchRules::kEdgemt, model.special_tokens()),
                      max_len);
}

// Greedy for K = 1, beam search otherwise.
Outcome naive_search(const Model& model, const std::vector<int32_t>& source, const Rules& rules,
                     size_t max_len, const DecodeOptions& options) {
  if (options.beam_size == 1) return naive_greedy(model, source, rules, max_len);
  return naive_beam(model, source, rules, max_len, options.beam_size,
                    static_cast<double>(options.length_penalty),
                    static_cast<double>(options.word_penalty));
}

struct Run {
  std::vector<std::vector<int32_t>> tokens;
  std::vector<float> scores;
  std::vector<StatusCode> status;
  std::vector<std::string> errors;
};

// Decoding options of this beam and length rule (max_len = a·len + b).
DecodeOptions with_lengths(size_t beam, float max_len_a, float max_len_b) {
  DecodeOptions options;
  options.beam_size = beam;
  options.max_len_a = max_len_a;
  options.max_len_b = max_len_b;
  return options;
}

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
      const DecodeOptions options = with_lengths(beam, 2.0f, 5.0f);
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
      const DecodeOptions options = with_lengths(beam, 0.0f, b);
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

// ---- Other frameworks' rules (format version 3: Model.decoding) ------------

// What one comparison loop saw.
struct Tally {
  size_t compared = 0;
  size_t near_ties = 0;     // not compared: a decision margin <= kMinMargin
  size_t eos_finished = 0;  // outputs shorter than max_len
  size_t at_max_len = 0;    // outputs of max_len tokens (no EOS)
  size_t not_greedy = 0;    // beam outputs other than greedy's
};

// No banned token, no EOS, every id in the vocabulary.
void check_allowed(const std::vector<int32_t>& tokens, const Rules& rules, const Model& model) {
  const auto vocab = static_cast<int32_t>(transformer_config(model).vocab_size);
  for (int32_t t : tokens) {
    CAPTURE(t);
    CHECK(t >= 0);
    CHECK(t < vocab);
    CHECK(t != model.special_tokens().eos);
    CHECK_FALSE(is_banned(rules, t));
  }
}

// Output i of `run` against the naive search, unless the naive search met a
// near-tie (float32 may then legitimately choose the other way).
void check_output(const Run& run, size_t i, const Outcome& naive, Tally* tally) {
  if (naive.margin <= kMinMargin) {
    ++tally->near_ties;
    MESSAGE("near-tie, not compared: margin " << naive.margin << " edgemt: " << show(run.tokens[i])
                                              << " naive: " << show(naive.tokens));
    return;
  }
  ++tally->compared;
  CHECK_MESSAGE(run.tokens[i] == naive.tokens, "edgemt: " << show(run.tokens[i]) << " naive: "
                                                          << show(naive.tokens) << " margin "
                                                          << naive.margin);
  CHECK(std::fabs(static_cast<double>(run.scores[i]) - naive.score) <
        1e-4 * (1.0 + std::fabs(naive.score)));
}

// kVariants and two whose EOS is only a little favoured: hypotheses end at
// different steps, where the rule sets part. (Checked by changing the naive
// search: with these two, a Marian beam that does not shrink, a Hugging Face
// search keeping every finished hypothesis and an OpenNMT one forgetting an
// earlier best EOS each give other outputs.)
std::vector<Variant> rule_variants() {
  std::vector<Variant> variants(std::begin(kVariants), std::end(kVariants));
  variants.push_back({"post-norm relu f32 seed 6 eos slightly favoured", NormPlacement::kPostNorm,
                      Activation::kRelu, DType::kF32, 6, 0.5f, 0.0f});
  variants.push_back({"post-norm relu f32 seed 7 eos a little favoured", NormPlacement::kPostNorm,
                      Activation::kRelu, DType::kF32, 7, 1.0f, 0.0f});
  return variants;
}

// Every rule variant under `rules` (the file's decoding table): greedy, beam
// 2 and 3, length penalties 0.6, 1.0 and 2.0 (long hypotheses favoured:
// Hugging Face's K best and stopping test, OpenNMT's early stop then
// matter) and each word penalty, all sources in one batch and each alone,
// against the naive search.
Tally check_rules_against_naive(SearchRules rules, const std::vector<float>& word_penalties) {
  Tally tally;
  for (const Variant& v : rule_variants()) {
    CAPTURE(std::string(v.name));
    Fixture f = make(v, 2, rules);
    if (skip_native_f16(f)) continue;
    for (size_t beam : {size_t{1}, size_t{2}, size_t{3}}) {
      for (float alpha : {0.6f, 1.0f, 2.0f}) {
        for (float word_penalty : word_penalties) {
          CAPTURE(beam);
          CAPTURE(alpha);
          CAPTURE(word_penalty);
          DecodeOptions options;
          options.beam_size = beam;
          options.length_penalty = alpha;
          options.word_penalty = word_penalty;
          options.max_len_a = 1.0f;
          options.max_len_b = 3.0f;
          const Run batched = translate(f.translator.get(), kSources, options);
          for (size_t i = 0; i < kSources.size(); ++i) {
            CAPTURE(i);
            const size_t max_len = max_len_for(kSources[i].size(), options, 32, rules);
            const Outcome naive = naive_search(*f.model, kSources[i], f.rules, max_len, options);
            check_output(batched, i, naive, &tally);
            check_allowed(batched.tokens[i], f.rules, *f.model);
            CHECK(batched.status[i] == StatusCode::kOk);
            const Run alone = translate(f.translator.get(), {kSources[i]}, options);
            CHECK(alone.tokens[0] == batched.tokens[i]);
            CHECK(alone.scores[0] == batched.scores[i]);
            if (naive.tokens.size() < max_len) ++tally.eos_finished;
            if (naive.tokens.size() == max_len) ++tally.at_max_len;
            if (beam > 1 &&
                naive.tokens != naive_greedy(*f.model, kSources[i], f.rules, max_len).tokens) {
              ++tally.not_greedy;
            }
          }
        }
      }
    }
  }
  MESSAGE(std::string(search_rules_name(rules)) << ": " << tally.compared << " compared, " << tally.near_ties
                            << " near-ties, " << tally.eos_finished << " ended by EOS, "
                            << tally.at_max_len << " at max_len, " << tally.not_greedy
                            << " beam outputs other than greedy's");
  // Near-ties are rare; both endings occur, and beam search is not greedy.
  CHECK(tally.near_ties * 20 <= tally.compared);
  CHECK(tally.eos_finished > 0);
  CHECK(tally.not_greedy > 0);
  return tally;
}

TEST_CASE("search: Hugging Face rules, greedy and beam 2 and 3, match the naive search") {
  const Tally tally = check_rules_against_naive(SearchRules::kHuggingFace, {0.0f});
  // The last token is always EOS: no output reaches max_len.
  CHECK(tally.at_max_len == 0);
}

TEST_CASE("search: OpenNMT rules, greedy and beam 2 and 3, match the naive search") {
  const Tally tally = check_rules_against_naive(SearchRules::kOpenNMT, {0.0f});
  CHECK(tally.at_max_len > 0);
}

TEST_CASE("search: Marian rules with word penalties 0 and 0.5, greedy and beam 2 and 3, "
          "match the naive search") {
  const Tally tally = check_rules_against_naive(SearchRules::kMarian, {0.0f, 0.5f});
  CHECK(tally.at_max_len > 0);
}

TEST_CASE("search: at a small max_len Hugging Face forces EOS, OpenNMT and Marian finish live "
          "hypotheses") {
  for (SearchRules rules :
       {SearchRules::kHuggingFace, SearchRules::kOpenNMT, SearchRules::kMarian}) {
    CAPTURE(std::string(search_rules_name(rules)));
    Tally tally;
    for (size_t variant : {size_t{0}, size_t{1}}) {
      const Variant& v = kVariants[variant];
      CAPTURE(std::string(v.name));
      Fixture f = make(v, 1, rules);
      for (float b : {1.0f, 2.0f, 3.0f}) {
        for (size_t beam : {size_t{1}, size_t{2}, size_t{3}}) {
          CAPTURE(b);
          CAPTURE(beam);
          DecodeOptions options;
          options.beam_size = beam;
          options.length_penalty = 0.6f;
          options.word_penalty = rules == SearchRules::kMarian ? 0.5f : 0.0f;
          options.max_len_a = 0.0f;
          options.max_len_b = b;
          const size_t max_len = static_cast<size_t>(b);
          const Run run = translate(f.translator.get(), kSources, options);
          for (size_t i = 0; i < kSources.size(); ++i) {
            CAPTURE(i);
            const Outcome naive = naive_search(*f.model, kSources[i], f.rules, max_len, options);
            check_output(run, i, naive, &tally);
            check_allowed(run.tokens[i], f.rules, *f.model);
            if (rules == SearchRules::kHuggingFace) {
              CHECK(run.tokens[i].size() < max_len);  // the last token was EOS
            } else {
              CHECK(run.tokens[i].size() <= max_len);
            }
            if (run.tokens[i].size() == max_len) ++tally.at_max_len;
            if (run.tokens[i].size() == max_len - 1) ++tally.eos_finished;
          }
        }
      }
    }
    CHECK(tally.near_ties * 20 <= tally.compared);
    if (rules == SearchRules::kHuggingFace) {
      CHECK(tally.eos_finished > 0);  // outputs cut at max_len - 1 by the forced EOS
    } else {
      CHECK(tally.at_max_len > 0);  // live hypotheses finished as they stood
    }
  }
}

TEST_CASE("search: Marian max_len rounds a*len+b up") {
  // a = 0.5: sources of 2, 6, 10 and 3 tokens give 1, 3, 5 and ceil(1.5) = 2.
  Tally tally;
  size_t above_floor = 0;  // outputs longer than floor(a·len + b) allows
  for (size_t variant : {size_t{0}, size_t{1}}) {
    const Variant& v = kVariants[variant];
    CAPTURE(std::string(v.name));
    Fixture f = make(v, 1, SearchRules::kMarian);
    for (size_t beam : {size_t{1}, size_t{2}, size_t{3}}) {
      CAPTURE(beam);
      const DecodeOptions options = with_lengths(beam, 0.5f, 0.0f);
      const Run run = translate(f.translator.get(), kSources, options);
      for (size_t i = 0; i < kSources.size(); ++i) {
        CAPTURE(i);
        const size_t max_len = max_len_for(kSources[i].size(), options, 32, SearchRules::kMarian);
        const size_t floor_len = max_len_for(kSources[i].size(), options, 32, SearchRules::kEdgemt);
        const Outcome naive = naive_search(*f.model, kSources[i], f.rules, max_len, options);
        check_output(run, i, naive, &tally);
        CHECK(run.tokens[i].size() <= max_len);
        if (run.tokens[i].size() > floor_len) ++above_floor;
      }
    }
  }
  CHECK(tally.near_ties * 20 <= tally.compared);
  CHECK(above_floor > 0);
}

TEST_CASE("search: Marian's max_len takes factor x length in float32, as Marian") {
  // A model that never ends (EOS far behind): every output is max_len long.
  // 1.2 x 5 and 1.2 x 10 are 6 and 12 in float32 (Marian's
  // beam_search.cpp), 6.0000002 and 12.0000005 in double (whose ceil, one
  // token more, edgemt used to take).
  const Variant v = {"post-norm relu f32 seed 7 eos never", NormPlacement::kPostNorm,
                     Activation::kRelu, DType::kF32, 7, -100.0f, 0.0f};
  Fixture f = make(v, 1, SearchRules::kMarian);
  const std::vector<std::vector<int32_t>> sources = {{5, 17, 9, 30, 3},
                                                     {11, 12, 13, 14, 15, 16, 17, 18, 19, 3}};
  for (size_t beam : {size_t{1}, size_t{2}}) {
    CAPTURE(beam);
    const DecodeOptions options = with_lengths(beam, 1.2f, 0.0f);
    const Run run = translate(f.translator.get(), sources, options);
    CHECK(run.tokens[0].size() == 6);
    CHECK(run.tokens[1].size() == 12);
  }
}

TEST_CASE("search: banned tokens are the file's list: bos is emitted under Marian-like, "
          "Hugging Face-like and OpenNMT-like rules, unk never under Marian-like ones") {
  // pad, bos and unk favoured alike (+4): whichever is not banned shows.
  const Variant v = {"post-norm relu f32 seed 7 pad bos and unk favoured", NormPlacement::kPostNorm,
                     Activation::kRelu, DType::kF32, 7, 0.5f, 4.0f, 4.0f};
  for (std::optional<SearchRules> rules :
       {std::optional<SearchRules>(), std::optional<SearchRules>(SearchRules::kMarian),
        std::optional<SearchRules>(SearchRules::kHuggingFace),
        std::optional<SearchRules>(SearchRules::kOpenNMT)}) {
    CAPTURE(std::string(search_rules_name(rules.value_or(SearchRules::kEdgemt))));
    CAPTURE(rules.has_value());
    Fixture f = make(v, 1, rules);
    const SpecialTokens& special = f.model->special_tokens();
    Tally tally;
    size_t with_pad = 0;
    size_t with_bos = 0;
    size_t with_unk = 0;
    for (size_t beam : {size_t{1}, size_t{2}, size_t{3}}) {
      CAPTURE(beam);
      const DecodeOptions options = with_lengths(beam, 1.0f, 3.0f);
      const Run run = translate(f.translator.get(), kSources, options);
      for (size_t i = 0; i < kSources.size(); ++i) {
        CAPTURE(i);
        const size_t max_len = max_len_for(kSources[i].size(), options, 32, f.rules.rules);
        const Outcome naive = naive_search(*f.model, kSources[i], f.rules, max_len, options);
        check_output(run, i, naive, &tally);
        check_allowed(run.tokens[i], f.rules, *f.model);
        for (int32_t t : run.tokens[i]) {
          with_pad += t == special.pad;
          with_bos += t == special.bos;
          with_unk += t == special.unk;
        }
      }
    }
    MESSAGE(std::string(search_rules_name(f.rules.rules))
            << ": pad " << with_pad << " times, bos " << with_bos << ", unk " << with_unk);
    CHECK(tally.near_ties * 20 <= tally.compared);
    // No table: pad and bos banned, unk shows. Marian-like: only unk
    // banned, bos shows. Hugging Face-like: only pad banned; OpenNMT-like:
    // nothing banned; bos shows (it outscores pad and unk in this model).
    if (!rules) {
      CHECK(with_pad + with_bos == 0);
      CHECK(with_unk > 0);
    } else if (*rules == SearchRules::kMarian) {
      CHECK(with_bos > 0);
      CHECK(with_unk == 0);
    } else if (*rules == SearchRules::kHuggingFace) {
      CHECK(with_pad == 0);
      CHECK(with_bos > 0);
    } else {
      CHECK(with_bos > 0);
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
Fixture load(const ModelBuilder& builder, size_t threads, bool greedy_scores = true) {
  Fixture f;
  open_fixture(builder, threads, greedy_scores, 16, &f);
  return f;
}

void check_failed(const Run& run, size_t i, const char* why) {
  CAPTURE(i);
  CHECK(run.status[i] == StatusCode::kNumericError);
  CHECK(run.tokens[i].empty());
  CHECK(run.scores[i] == 0.0f);
  CHECK(run.errors[i].find(why) != std::string::npos);
}

// Source token 20's embedding is huge: any sentence holding it overflows in
// the encoder (NaN/inf through attention), the others are untouched.
ModelBuilder overflowing_token_builder() {
  ModelBuilder builder(testing::tiny_config(), DType::kF32, 3);
  testing::BuilderTensor* embedding = builder.find("embedding.source");
  REQUIRE(embedding != nullptr);
  const size_t d = builder.config.d_model;
  for (size_t i = 0; i < d; ++i) embedding->values[20 * d + i] = i % 2 == 0 ? kHuge : -kHuge;
  return builder;
}

// Sentences 1 and 3 hold token 20.
const std::vector<std::vector<int32_t>> kOverflowSources = {
    {5, 17, 9, 3}, {20, 7, 3}, {11, 12, 13, 3}, {6, 20, 20, 3}};

TEST_CASE("search: a sentence whose activations overflow fails alone, greedy and beam") {
  const ModelBuilder builder = overflowing_token_builder();
  const std::vector<std::vector<int32_t>>& sources = kOverflowSources;
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


// Greedy without scores against greedy with: the same tokens, statuses and
// errors, every score NaN (0 on failure).
void check_unscored(const Run& without, const Run& with) {
  for (size_t i = 0; i < with.tokens.size(); ++i) {
    CAPTURE(i);
    CHECK(without.tokens[i] == with.tokens[i]);
    CHECK(without.status[i] == with.status[i]);
    CHECK(without.errors[i] == with.errors[i]);
    if (with.status[i] == StatusCode::kOk) {
      CHECK(std::isfinite(with.scores[i]));
      CHECK(std::isnan(without.scores[i]));
    } else {
      CHECK(without.scores[i] == 0.0f);
    }
  }
}

// Translator::set_greedy_scores(false) as checked by check_unscored. On x86
// (AVX2) and AArch64 f32 models' output projections run on the own f32 GEMM,
// so the arg-max shortcut is built (checked where it is) and decides most
// steps. A translator set unscored before prepare() starts with its
// projection unpacked (computed from the file's rows): its greedy and beam
// results are checked too, against those after set_greedy_scores(true)
// packed it (beam: the same tokens and score bits).
void check_same_without_scores(Translator* translator,
                               const std::vector<std::vector<int32_t>>& sources,
                               const DecodeOptions& options) {
  DecodeOptions beam = options;
  beam.beam_size = 2;
  const bool started_unscored = !translator->greedy_scores();
  Run unpacked, unpacked_beam;
  if (started_unscored) {
    unpacked = translate(translator, sources, options);
    unpacked_beam = translate(translator, sources, beam);
  }
  REQUIRE(translator->set_greedy_scores(true).is_ok());
  const Run with = translate(translator, sources, options);
  const Run beam_with = translate(translator, sources, beam);
  REQUIRE(translator->set_greedy_scores(false).is_ok());
  CHECK_FALSE(translator->greedy_scores());
  check_unscored(translate(translator, sources, options), with);
  if (started_unscored) {
    check_unscored(unpacked, with);
    CHECK(unpacked_beam.tokens == beam_with.tokens);
    CHECK(unpacked_beam.status == beam_with.status);
    CHECK(std::memcmp(unpacked_beam.scores.data(), beam_with.scores.data(),
                      beam_with.scores.size() * sizeof(float)) == 0);
  }
  // Beam search is not affected: still scored.
  const Run beam_run = translate(translator, sources, beam);
  for (size_t i = 0; i < sources.size(); ++i) {
    if (beam_run.status[i] == StatusCode::kOk) CHECK(std::isfinite(beam_run.scores[i]));
  }
  REQUIRE(translator->set_greedy_scores(true).is_ok());
  CHECK(translator->greedy_shortcut_bytes() == 0);
  CHECK(translate(translator, sources, options).tokens == with.tokens);
}

TEST_CASE("search: greedy without scores gives greedy's tokens and failures, every rule set") {
  // Set unscored after prepare() (the projection already packed) and
  // before it (left unpacked until set_greedy_scores(true)).
  const std::vector<std::vector<int32_t>> sources = {
      {5, 17, 9, 30, 12, 3}, {7, 3}, {11, 12, 13, 14, 15, 16, 17, 18, 19, 3}, {25, 4, 3}};
  for (const Variant& v : kVariants) {
    for (SearchRules rules : {SearchRules::kEdgemt, SearchRules::kHuggingFace,
                              SearchRules::kOpenNMT, SearchRules::kMarian}) {
      for (size_t threads : {size_t{1}, size_t{2}}) {
        for (bool before_prepare : {false, true}) {
          for (float b : {3.0f, 20.0f}) {  // a short max_len: Hugging Face forces EOS
            CAPTURE(std::string(v.name));
            CAPTURE(static_cast<int>(rules));
            CAPTURE(threads);
            CAPTURE(before_prepare);
            CAPTURE(b);
            Fixture f = make(v, threads, rules, !before_prepare);
            REQUIRE(f.translator->set_greedy_scores(false).is_ok());
            if (std::string(f.translator->compute_path()).rfind("f32", 0) == 0 &&
                kernels::f32::replaces_xnnpack()) {
              CHECK(f.translator->greedy_shortcut_bytes() > 0);
            }
            const DecodeOptions options = with_lengths(1, 0.5f, b);
            check_same_without_scores(f.translator.get(), sources, options);
          }
        }
      }
    }
  }
}

TEST_CASE("search: greedy without scores fails the sentences greedy fails") {
  // Overflowing activations (NaN in the decoder's state), logits that
  // overflow to +inf, and only banned tokens finite: the shortcut cannot
  // prove these rows and leaves them to the full row, with the same result.
  const ModelBuilder overflow = overflowing_token_builder();
  DecodeOptions greedy;
  greedy.beam_size = 1;
  // Set unscored before prepare() too: the full rows then come from the
  // unpacked projection.
  for (bool before_prepare : {false, true}) {
    CAPTURE(before_prepare);
    for (size_t threads : {size_t{1}, size_t{2}}) {
      CAPTURE(threads);
      Fixture f = load(overflow, threads, !before_prepare);
      check_same_without_scores(f.translator.get(), kOverflowSources, greedy);
    }
    Fixture infinite = load(constant_logits_builder(kHuge, kHuge), 1, !before_prepare);
    check_same_without_scores(infinite.translator.get(), kSources, greedy);
    Fixture banned_only = load(constant_logits_builder(-kHuge, 0.0f), 1, !before_prepare);
    check_same_without_scores(banned_only.translator.get(), kSources, greedy);
  }
}
}  // namespace
}  // namespace edgemt
