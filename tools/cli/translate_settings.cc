#include "cli/translate_settings.h"

#include <unistd.h>

#include <vector>

#include "cli/arguments.h"
#include "cli/language_codes.h"
#include "edgemt/sentences.h"
#include "edgemt/limits.h"

namespace edgemt::cli {

namespace {

constexpr const char* kHelp =
    "usage: edgemt translate -m MODEL [options] [TEXT ...]\n"
    "\n"
    "Reads one paragraph or sentence per line and writes one translation per\n"
    "line, in the same order. TEXTs given after the options are the input\n"
    "instead (one output line each; a line break inside a TEXT counts as a\n"
    "space): edgemt translate -m MODEL \"A dog runs.\" \"Two cats sleep.\"\n"
    "Sentences are translated in batches; an empty\n"
    "(or blank) line gives an empty line. A batch is translated as soon as no\n"
    "further whole line is waiting, so a program that writes one line into a\n"
    "pipe and waits gets its translation at once; output is flushed after\n"
    "each batch.\n"
    "\n"
    "options:\n"
    "  -m, --model FILE        model file (.emt)                     [required]\n"
    "  -i, --input FILE        read from FILE (not with TEXTs)       [stdin]\n"
    "      --paragraphs        hard-wrapped text: the lines up to a blank line\n"
    "                          are one paragraph, translated as one line (its\n"
    "                          lines joined by spaces) and written as one line;\n"
    "                          each blank line is written as it is\n"
    "  -o, --output FILE       write to FILE (not the input or the model file:\n"
    "                          refused, status 2)                    [stdout]\n"
    "      --beam N            beam size, 1 = greedy (1..16)         [the model's]\n"
    "      --length-penalty A  beam score = logprob / length^A       [the model's]\n"
    "      --word-penalty W    Marian models: score - W * length     [the model's]\n"
    "                          (others: refused unless 0)\n"
    "      --max-len N         at most N generated tokens            [the model's max length]\n"
    "      --max-len-a A       at most floor(A * source tokens + B)  [the model's]\n"
    "      --max-len-b B       generated tokens (with --max-len-a)   [the model's]\n"
    "      --target-prefix L   target language of a multi-target model:\n"
    "                          its token (>>L<<, e.g. fra) is put first in\n"
    "                          every source ('edgemt inspect' lists them)\n"
    "      --threads N         threads, the calling one included (1..256) [1]\n"
    "      --batch N           sentences per batch (1..256)          [16; 1 on a terminal]\n"
    "      --max-line-bytes N  longest input line read, in bytes     [65536]\n"
    "                          (1..67108864); memory stays bounded by it\n"
    "      --copy-model        read the model file into memory instead of\n"
    "                          mapping it (see 'model file' below)\n"
    "      --skip-checksum     do not compute the model file's checksums at\n"
    "                          load (see 'model file' below)\n"
    "      --no-greedy-shortcut  greedy decoding computes every logit (see\n"
    "                          'greedy' below)\n"
    "      --no-shortlist      a model with a lexical shortlist: choose from\n"
    "                          the whole vocabulary (see 'shortlist' below)\n"
    "      --marian-int8-sums CPU  an int8 file converted from a Marian intgemm8\n"
    "                          model: the sums Marian computes on a CPU of kind\n"
    "                          CPU: exact (AVX-512 VNNI), avx2, avx512bw (no\n"
    "                          VNNI) or ssse3 (see 'Marian int8' below) [exact]\n"
    "\n"
    "sentences:\n"
    "      --split-sentences   translate each sentence of a line on its own and\n"
    "                          join their translations into the line's  [on]\n"
    "      --no-split-sentences  translate each line whole\n"
    "      --source-lang L     the splitting rules' language (e.g. en, de) [the\n"
    "                          model's source language; none: generic rules]\n"
    "                          L is a language code (en, de-AT, pt_BR, ber);\n"
    "                          en, de and fr have rules of their own, any\n"
    "                          other code gets the generic rules (a note on\n"
    "                          stderr says so); what is not a language code\n"
    "                          is refused (status 2)\n"
    "\n"
    "output:\n"
    "      --json              one JSON object per input line (see below)\n"
    "      --align             word alignment from the attention weights:\n"
    "                          'translation ||| 0-0 1-2 ...' (source word -\n"
    "                          target word, 0-based, whitespace words of the\n"
    "                          line and of its translation, as Marian's\n"
    "                          --alignment; an empty or failed line gives\n"
    "                          ' ||| '); with --json an \"alignment\" field\n"
    "      --attention DIR     write each sentence's attention weights as an\n"
    "                          SVG heat map: DIR/<line>.svg, or DIR/<line>-<k>.svg\n"
    "                          for the k-th sentence of a split line (DIR is\n"
    "                          created if missing)\n"
    "      --show-attention    print each sentence's attention as a heat map\n"
    "                          on stderr (stdout keeps one line per input line)\n"
    "      --attention-layer N\n"
    "                          the decoder layer whose attention over the\n"
    "                          source is used, 0-based           [the last]\n"
    "      --attention-head H  its head, 0-based     [the mean over every head]\n"
    "                          (a model with a single attention: 0 or neither)\n"
    "      --progress          show progress on stderr (lines, sentences/s and,\n"
    "                          when the input is a regular file, an ETA)\n"
    "      --no-progress       never show it\n"
    "                          [shown when stderr is a terminal and the input\n"
    "                          is not]\n"
    "  -h, --help              show this help\n"
    "\n"
    "Decoding defaults are the model's: those its source framework's own\n"
    "translator uses (OpenNMT-py, Marian, Hugging Face), recorded by\n"
    "edgemt-convert, or for --from torch models beam 1, length penalty 1.0,\n"
    "at most 2 * source tokens + 10; 'edgemt inspect' prints them. The search\n"
    "always follows the model's framework's rules.\n"
    "\n"
    "greedy: with beam 1 and without --json (no score is printed), a model\n"
    "whose output projection is computed in f32 keeps an int8 copy of it\n"
    "(vocab x (hidden size + 28) bytes: 2 MiB for an 8k x 256 model) that bounds\n"
    "every logit of a step, and computes exactly only the few that can be the\n"
    "largest: the same translations, faster. For an fp32 model file the copy\n"
    "replaces the f32 one the projection keeps otherwise (the few rows computed\n"
    "exactly are read from the file): a quarter of that memory. For fp16 files\n"
    "it comes beside it. --no-greedy-shortcut turns it off.\n"
    "\n"
    "shortlist: a model converted with a lexical shortlist ('edgemt inspect'\n"
    "says) computes, for each batch, only the logits of its candidate target\n"
    "ids (the first ids, each source token's list, EOS) and normalizes over\n"
    "them, as Marian does with the same shortlist: faster, and the output\n"
    "Marian gives. A sentence's candidates are those of its whole batch, so\n"
    "its translation may change with the sentences batched with it (--batch 1\n"
    "matches Marian's --mini-batch 1).\n"
    "\n"
    "Marian int8: Marian's intgemm sums int8 products exactly only on CPUs\n"
    "with AVX-512 VNNI; on AVX2, AVX-512 BW and SSSE3 CPUs it adds 16-bit\n"
    "pairs with saturation, which changes some of its translations. edgemt's\n"
    "sums are exact on every CPU, Marian's VNNI output; --marian-int8-sums\n"
    "avx2 (avx512bw, ssse3) gives the output Marian gives on such a CPU\n"
    "instead, on any CPU, on kernels of their own: for a file with alphas\n"
    "(Firefox's) faster than the exact sums on an x86 CPU without VNNI;\n"
    "otherwise slower.\n"
    "\n"
    "Sentence splitting is on by default because the models edgemt converts\n"
    "are trained on single sentences: a paragraph fed whole comes out\n"
    "truncated, or with its sentences merged. A line with one sentence is\n"
    "translated exactly as without splitting. Every sentence is its own source\n"
    "in a batch (--batch counts sentences); the line's output is their\n"
    "translations joined, still one output line per input line. Pass\n"
    "--no-split-sentences to translate whole lines (as when comparing with\n"
    "another translator's output line by line). A sentence with more tokens\n"
    "than the model's position table is cut into pieces that fit, at\n"
    "whitespace after , ; : or a dash when there is one, else at other\n"
    "whitespace (between characters only for a single word too long), and\n"
    "the pieces' translations are joined as sentences are.\n"
    "\n"
    "--json writes, for each input line, one object on one line:\n"
    "  {\"line\": N, \"translation\": \"...\", \"score\": S, \"tokens\": [\"piece\", ...]}\n"
    "score is the log-probability (beam: length-normalized), tokens the target\n"
    "pieces; \"alignment\": [[source word, target word], ...] with --align. A\n"
    "line of several sentences also has \"sentences\": one object per sentence\n"
    "with its \"source\", \"translation\", \"score\", \"tokens\" (and\n"
    "\"alignment\", in the sentence's own words); the line's score is their\n"
    "sum, its tokens all of theirs. An empty line has score 0 and no tokens; a\n"
    "line that failed has \"translation\": \"\" and \"error\": the reason.\n"
    "\n"
    "Attention weights (--align, --attention, --show-attention) come from\n"
    "the decoder's attention over the source tokens; the translator then\n"
    "plans memory for them (max length x batch x beam x max length floats)\n"
    "and a model family that has none is an error (status 1).\n"
    "\n"
    "Every input line gives exactly one output line. A line is not translated,\n"
    "and gives an empty output line plus an error naming it on stderr, when\n"
    "it is longer than --max-line-bytes (it is skipped unread, not split), is\n"
    "not valid UTF-8, with --no-split-sentences has more tokens than the\n"
    "model's position table (counting EOS), or when the model computes NaN or\n"
    "infinite scores for it (an overflow, e.g. in an fp16 model); the other\n"
    "lines are translated as usual and edgemt exits with status 1 at the end.\n"
    "\n"
    "model file: by default MODEL is memory-mapped and its weights are read in\n"
    "place. Do not truncate or rewrite it in place while edgemt runs: edgemt\n"
    "then stops with status 1 and a 'bus error reading the model file' message.\n"
    "Replacing it by renaming a new file over it is safe (edgemt-convert writes\n"
    "that way). --copy-model reads the whole file at start instead, so nothing\n"
    "done to the file later matters, at the cost of its size in memory.\n"
    "MODEL must be a regular file (a FIFO or a device is refused). Files of\n"
    "format version 4 and later end in CRC-32C checksums of their header and\n"
    "weights, computed at load: a damaged file is refused (status 1).\n"
    "--skip-checksum skips that, for a file verified elsewhere (a signed\n"
    "image, a download checked against its hash); every other check runs.\n"
    "\n"
    "exit status: 0 ok, 1 model or input error, 2 bad usage\n";

// --a and --no-a: at most one; *value stays as it was when neither is given.
bool read_switch(const Arguments& args, const std::string& name, bool* value, std::string* error) {
  const bool on = args.has(name);
  const bool off = args.has("no-" + name);
  if (on && off) {
    *error = "options '--" + name + "' and '--no-" + name + "' contradict each other";
    return false;
  }
  if (on) *value = true;
  if (off) *value = false;
  return true;
}

bool read_attention_settings(const Arguments& args, TranslateSettings* settings,
                             std::string* error) {
  if (args.has("attention")) {
    settings->attention_dir = args.get("attention", "");
    if (settings->attention_dir.empty()) {
      *error = "option '--attention' needs a folder for the SVG files";
      return false;
    }
  }
  settings->show_attention = args.has("show-attention");
  settings->align = args.has("align");
  settings->attention_choice_set = args.has("attention-layer") || args.has("attention-head");
  if (settings->attention_choice_set && !settings->wants_attention()) {
    *error = "options '--attention-layer' and '--attention-head' choose the weights of "
             "--align, --attention or --show-attention; give one of those";
    return false;
  }
  size_t layer = 0;
  size_t head = 0;
  // The runtime checks these against the model (prepare()); here only that
  // they are whole numbers.
  if (!args.get_size("attention-layer", 0, 0, 1023, &layer, error) ||
      !args.get_size("attention-head", 0, 0, 1023, &head, error)) {
    return false;
  }
  settings->attention_layer = args.has("attention-layer") ? static_cast<int>(layer) : -1;
  settings->attention_head = args.has("attention-head") ? static_cast<int>(head) : -1;
  return true;
}

}  // namespace

const char* translate_help() { return kHelp; }

bool read_translate_settings(int argc, char** argv, TranslateSettings* settings,
                             std::string* error) {
  const std::vector<FlagSpec> specs = {
      {"model", 'm', true},     {"input", 'i', true},     {"output", 'o', true},
      {"beam", '\0', true},     {"length-penalty", '\0', true},
      {"max-len", '\0', true},  {"max-len-a", '\0', true}, {"max-len-b", '\0', true},
      {"threads", '\0', true},  {"batch", '\0', true},    {"help", 'h', false},
      {"max-line-bytes", '\0', true}, {"copy-model", '\0', false},
      {"skip-checksum", '\0', false},
      {"no-greedy-shortcut", '\0', false}, {"no-shortlist", '\0', false},
      {"marian-int8-sums", '\0', true},
      {"word-penalty", '\0', true}, {"target-prefix", '\0', true},
      {"progress", '\0', false}, {"no-progress", '\0', false}, {"json", '\0', false},
      {"split-sentences", '\0', false}, {"no-split-sentences", '\0', false},
      {"paragraphs", '\0', false},
      {"source-lang", '\0', true}, {"attention", '\0', true}, {"show-attention", '\0', false},
      {"align", '\0', false}, {"attention-layer", '\0', true}, {"attention-head", '\0', true},
  };
  Arguments args;
  if (!args.parse(argc, argv, 2, specs, error)) return false;
  if (args.has("help")) {
    settings->help = true;
    return true;
  }
  settings->model_path = args.get("model", "");
  if (settings->model_path.empty()) {
    *error = "a model is required (-m MODEL)";
    return false;
  }
  settings->texts = args.positional();
  settings->input_path = args.get("input", "");
  settings->paragraphs = args.has("paragraphs");
  if (!settings->texts.empty() && args.has("input")) {
    *error = "give texts to translate or '-i FILE', not both";
    return false;
  }
  settings->output_path = args.get("output", "");
  settings->copy_model = args.has("copy-model");
  settings->verify_checksum = !args.has("skip-checksum");
  settings->greedy_shortcut = !args.has("no-greedy-shortcut");
  settings->shortlist = !args.has("no-shortlist");
  if (args.has("marian-int8-sums") &&
      !parse_marian_int8_sums(args.get("marian-int8-sums", ""), &settings->marian_int8_sums,
                              error)) {
    return false;
  }
  settings->target_prefix = args.get("target-prefix", "");
  settings->beam_set = args.has("beam");
  settings->length_penalty_set = args.has("length-penalty");
  settings->word_penalty_set = args.has("word-penalty");
  settings->max_len_a_set = args.has("max-len-a");
  settings->max_len_b_set = args.has("max-len-b");
  if (args.has("target-prefix") && settings->target_prefix.empty()) {
    *error = "option '--target-prefix' needs a language, e.g. fra";
    return false;
  }
  bool progress = false;
  const bool progress_set = args.has("progress") || args.has("no-progress");
  if (!read_switch(args, "progress", &progress, error) ||
      !read_switch(args, "split-sentences", &settings->split_sentences, error)) {
    return false;
  }
  settings->progress = !progress_set ? ProgressMode::kAuto : progress ? ProgressMode::kOn
                                                                      : ProgressMode::kOff;
  settings->json = args.has("json");
  settings->source_language_set = args.has("source-lang");
  settings->source_language = args.get("source-lang", "");
  if (settings->source_language_set && settings->source_language.empty()) {
    *error = "option '--source-lang' needs a language, e.g. en";
    return false;
  }
  if (settings->source_language_set && !is_language_code(settings->source_language)) {
    *error = "option '--source-lang' takes a language code (ISO 639, e.g. en, de-AT, ber), not '" +
             settings->source_language + "'";
    return false;
  }
  if (settings->source_language_set && !settings->split_sentences) {
    *error = "option '--source-lang' chooses the sentence splitting rules; it does nothing "
             "with '--no-split-sentences'";
    return false;
  }
  if (!read_attention_settings(args, settings, error)) return false;
  const size_t default_batch =
      isatty(STDIN_FILENO) && settings->input_path.empty() && settings->texts.empty() ? 1 : 16;
  return args.get_size("beam", 1, 1, 16, &settings->decode.beam_size, error) &&
         args.get_float("length-penalty", 1.0f, &settings->decode.length_penalty, error) &&
         args.get_float("word-penalty", 0.0f, &settings->decode.word_penalty, error) &&
         args.get_size("max-len", 0, 1, 1u << 20, &settings->max_len, error) &&
         args.get_float("max-len-a", 2.0f, &settings->decode.max_len_a, error) &&
         args.get_float("max-len-b", 10.0f, &settings->decode.max_len_b, error) &&
         args.get_size("threads", 1, 1, 256, &settings->threads, error) &&
         args.get_size("batch", default_batch, 1, 256, &settings->batch, error) &&
         args.get_size("max-line-bytes", kDefaultMaxInputBytes, 1, kMaxInputBytes,
                       &settings->max_line_bytes, error) &&
         (settings->decode.max_len_a >= 0.0f ||
          (*error = "option '--max-len-a' must not be negative", false));
}

std::string source_language_note(const TranslateSettings& settings) {
  if (!settings.source_language_set || has_own_splitting_rules(settings.source_language)) return "";
  return "no sentence-splitting rules of its own for '" + settings.source_language +
         "' (en, de and fr have some): the generic rules are used";
}

std::string model_settings_error(const Model& model, const TranslateSettings& settings) {
  const SearchRules rules = model.decoding().rules;
  if (settings.word_penalty_set && settings.decode.word_penalty != 0.0f &&
      rules != SearchRules::kMarian) {
    return std::string("option '--word-penalty' is for models with Marian's search rules; this "
                       "model follows ") +
           search_rules_name(rules) + "'s, which have none (its length rule is --length-penalty)";
  }
  return marian_int8_sums_error(model, settings.marian_int8_sums);
}

bool parse_marian_int8_sums(const std::string& cpu, MarianInt8Sums* sums, std::string* error) {
  if (cpu == "exact") {
    *sums = MarianInt8Sums::kExact;
  } else if (cpu == "avx2") {
    *sums = MarianInt8Sums::kAvx2;
  } else if (cpu == "avx512bw") {
    *sums = MarianInt8Sums::kAvx512bw;
  } else if (cpu == "ssse3") {
    *sums = MarianInt8Sums::kSsse3;
  } else {
    *error = "option '--marian-int8-sums' takes exact, avx2, avx512bw or ssse3, not '" + cpu + "'";
    return false;
  }
  return true;
}

std::string marian_int8_sums_error(const Model& model, MarianInt8Sums sums) {
  const QuantizationScheme scheme = model.quantization();
  if (sums != MarianInt8Sums::kExact && scheme != QuantizationScheme::kInt8PerTensorDynamic &&
      scheme != QuantizationScheme::kInt8PerTensorStatic) {
    return std::string("option '--marian-int8-sums' is for int8 files converted from a Marian "
                       "intgemm8 model (Marian's int8 arithmetic); this file's scheme is ") +
           quantization_scheme_name(scheme);
  }
  return "";
}

std::string model_settings_note(const Model& model, const TranslateSettings& settings) {
  if (!settings.shortlist && model.shortlist() == nullptr) {
    return "the model has no lexical shortlist: --no-shortlist changes nothing";
  }
  return "";
}

DecodeOptions decode_settings(const Model& model, const TranslateSettings& settings) {
  DecodeOptions decode = decode_options(model);
  if (settings.beam_set) decode.beam_size = settings.decode.beam_size;
  if (settings.length_penalty_set) decode.length_penalty = settings.decode.length_penalty;
  if (settings.word_penalty_set) decode.word_penalty = settings.decode.word_penalty;
  if (settings.max_len_a_set) decode.max_len_a = settings.decode.max_len_a;
  if (settings.max_len_b_set) decode.max_len_b = settings.decode.max_len_b;
  return decode;
}

}  // namespace edgemt::cli
