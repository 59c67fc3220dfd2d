#include "cli/translate_engine.h"

#include <algorithm>
#include <memory>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/bus_error.h"
#include "cli/commands.h"

namespace edgemt::cli {

namespace {

// The source id of --target-prefix L (written L or >>L<<); false with a
// message naming the languages the model has.
bool target_prefix_id(const Tokenizer& tokenizer, const std::string& language, int32_t* id,
                      std::string* error) {
  const std::string piece =
      language.size() > 4 && language.rfind(">>", 0) == 0 ? language : ">>" + language + "<<";
  if (tokenizer.piece_id(piece, id).is_ok()) return true;
  const std::vector<std::string> known = tokenizer.target_language_tokens();
  if (known.empty()) {
    *error = "--target-prefix " + language + ": this model has no target-language tokens (it " +
             "translates into one language; leave --target-prefix out)";
    return false;
  }
  *error = "--target-prefix " + language + ": the model has no token " + piece + "; it has";
  for (size_t i = 0; i < known.size() && i < 40; ++i) *error += " " + known[i];
  if (known.size() > 40) *error += " ...";
  return false;
}

// prepare() with the settings' limits; on failure the message and status.
int prepare_translator(const TranslateSettings& settings, TranslateEngine* engine) {
  const size_t longest = engine->model->max_sequence_length();
  Limits limits;
  limits.max_batch = settings.batch;
  limits.max_beam = engine->decode.beam_size;
  limits.max_source_len = longest;
  limits.max_target_len = settings.max_len == 0 ? longest : std::min(settings.max_len, longest);
  // Attention weights cost max_target_len x batch·beam x max_source_len
  // floats of arena: planned only when asked for.
  limits.attention = settings.wants_attention();
  limits.attention_layer = settings.attention_layer;
  limits.attention_head = settings.attention_head;
  const Status status = engine->translator->prepare(limits);
  if (status.is_ok()) return kExitOk;
  if (!limits.attention) {
    std::fprintf(stderr, "edgemt: %s\n", status.message());
    return kExitFailure;
  }
  // A layer or head the model does not have is a bad flag value (usage); a
  // family without attention weights is the model's limit.
  const bool bad_choice =
      settings.attention_choice_set && status.code() == StatusCode::kInvalidArgument;
  std::fprintf(stderr, "edgemt%s: %s (%s)\n", bad_choice ? " translate" : "", status.message(),
               bad_choice ? "--attention-layer / --attention-head"
                          : "asked for by --align, --attention or --show-attention");
  return bad_choice ? kExitUsage : kExitFailure;
}

}  // namespace

int load_translate_engine(const TranslateSettings& settings, TranslateEngine* engine) {
  LoadOptions load_options;
  load_options.mode = settings.copy_model ? LoadMode::kCopy : LoadMode::kMap;
  load_options.verify_checksum = settings.verify_checksum;
  if (!settings.copy_model) exit_cleanly_on_bus_error(settings.model_path);
  Status status = Model::load(settings.model_path.c_str(), load_options, &engine->model);
  if (!status.is_ok()) {
    std::fprintf(stderr, "edgemt: cannot load model '%s': %s\n", settings.model_path.c_str(),
                 status.message());
    return kExitFailure;
  }
  const Model& model = *engine->model;
  // Options the model cannot honour, before the tokenizer and translator
  // are made for nothing.
  const std::string refused = model_settings_error(model, settings);
  if (!refused.empty()) {
    std::fprintf(stderr, "edgemt translate: %s\n(run 'edgemt translate --help')\n", refused.c_str());
    return kExitUsage;
  }
  const std::string note = model_settings_note(model, settings);
  if (!note.empty()) std::fprintf(stderr, "edgemt: note: %s\n", note.c_str());
  TranslatorOptions options;
  options.threads = settings.threads;
  options.marian_int8_sums = settings.marian_int8_sums;
  TokenizerOptions tokenizer_options;
  tokenizer_options.max_input_bytes = settings.max_line_bytes;
  status = Tokenizer::create(model, tokenizer_options, &engine->tokenizer);
  if (status.is_ok()) status = Translator::create(model, options, &engine->translator);
  if (status.is_ok() && (settings.json || settings.wants_attention())) {
    engine->pieces = std::make_unique<PieceSpeller>(*engine->tokenizer);
  }
  if (!status.is_ok()) {
    std::fprintf(stderr, "edgemt: %s\n", status.message());
    return kExitFailure;
  }
  engine->decode = decode_settings(model, settings);
  if (!settings.shortlist && model.shortlist() != nullptr) {
    status = engine->translator->set_shortlist(false);
    if (!status.is_ok()) {
      std::fprintf(stderr, "edgemt: %s\n", status.message());
      return kExitFailure;
    }
  }
  // Greedy output without printed scores needs only each step's arg-max
  // (Translator::set_greedy_scores); --json prints the scores.
  if (settings.greedy_shortcut && !settings.json && engine->decode.beam_size == 1) {
    status = engine->translator->set_greedy_scores(false);
    if (!status.is_ok()) {
      std::fprintf(stderr, "edgemt: %s\n", status.message());
      return kExitFailure;
    }
  }
  const int prepared = prepare_translator(settings, engine);
  if (prepared != kExitOk) return prepared;
  engine->has_target_prefix = !settings.target_prefix.empty();
  std::string error;
  if (engine->has_target_prefix &&
      !target_prefix_id(*engine->tokenizer, settings.target_prefix, &engine->target_prefix, &error)) {
    std::fprintf(stderr, "edgemt translate: %s\n", error.c_str());
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace edgemt::cli
