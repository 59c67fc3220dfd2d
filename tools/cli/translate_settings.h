// The settings of `edgemt translate`: its flags, their checks and --help.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "edgemt/model.h"
#include "edgemt/translator.h"

namespace edgemt::cli {

// The --help text (what every flag does, the defaults, the exit statuses).
const char* translate_help();

enum class ProgressMode { kAuto, kOn, kOff };

struct TranslateSettings {
  bool help = false;
  std::string model_path;
  std::string input_path;   // "" = stdin
  // Texts given on the command line (each one input line; its own line
  // breaks count as spaces): the input instead of stdin or -i.
  std::vector<std::string> texts;
  // --paragraphs: a paragraph (lines up to a blank line) is one input line,
  // its lines joined with spaces.
  bool paragraphs = false;
  std::string output_path;  // "" = stdout
  DecodeOptions decode;
  // Which of decode's values the command line set (the rest are the model's).
  bool beam_set = false;
  bool length_penalty_set = false;
  bool word_penalty_set = false;
  bool max_len_a_set = false;
  bool max_len_b_set = false;
  std::string target_prefix;
  size_t max_len = 0;  // 0 = the model's max length
  size_t threads = 1;
  size_t batch = 16;  // sentences per translate() call
  size_t max_line_bytes = 0;
  bool copy_model = false;
  bool verify_checksum = true;  // false: --skip-checksum
  bool greedy_shortcut = true;  // --no-greedy-shortcut clears it
  bool shortlist = true;        // --no-shortlist clears it (models that have one)
  MarianInt8Sums marian_int8_sums = MarianInt8Sums::kExact;  // --marian-int8-sums

  ProgressMode progress = ProgressMode::kAuto;
  bool json = false;
  bool split_sentences = true;
  std::string source_language;  // "" = the model's (--source-lang)
  bool source_language_set = false;

  // Attention weights: any of these asks the translator for them.
  std::string attention_dir;  // --attention DIR: one SVG per sentence
  bool show_attention = false;
  bool align = false;
  int attention_layer = -1;  // -1 = the last decoder layer
  int attention_head = -1;   // -1 = the mean over every head
  bool attention_choice_set = false;  // --attention-layer or --attention-head given

  bool wants_attention() const { return !attention_dir.empty() || show_attention || align; }
};

// Parses argv[2..]; false with *error (for an exit status 2 message) on a
// bad flag, value or combination. --help sets settings->help only.
bool read_translate_settings(int argc, char** argv, TranslateSettings* settings,
                             std::string* error);

// The model's decoding defaults, overridden by what the command line set.
DecodeOptions decode_settings(const Model& model, const TranslateSettings& settings);

// What the command line asks of this model that it cannot do (exit status
// 2): --word-penalty W != 0 for a model whose search rules are not
// Marian's (theirs have no word penalty: it would be ignored),
// --marian-int8-sums other than exact for a file not in Marian's int8
// arithmetic. "" if none.
std::string model_settings_error(const Model& model, const TranslateSettings& settings);
// --marian-int8-sums CPU (exact, avx2, avx512bw, ssse3), for translate and
// bench; false with a one-line error for anything else.
bool parse_marian_int8_sums(const std::string& cpu, MarianInt8Sums* sums, std::string* error);
// Why `sums` cannot run on this model (not exact for a file outside
// Marian's int8 arithmetic), or "".
std::string marian_int8_sums_error(const Model& model, MarianInt8Sums sums);
// What to tell on stderr about an option that changes nothing for this
// model (--no-shortlist without a shortlist), or "".
std::string model_settings_note(const Model& model, const TranslateSettings& settings);

// What to tell about --source-lang on stderr: "" when it is not given or
// names a language with splitting rules of its own, else that the generic
// rules are used for it.
std::string source_language_note(const TranslateSettings& settings);

}  // namespace edgemt::cli
