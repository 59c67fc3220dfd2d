// edgemt translate: lines in, one translation per line out, in order.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/arguments.h"
#include "cli/bus_error.h"
#include "cli/commands.h"
#include "cli/line_reader.h"
#include "edgemt/limits.h"
#include "edgemt/model.h"
#include "edgemt/tokenizer.h"
#include "edgemt/translator.h"

namespace edgemt::cli {
namespace {

constexpr const char* kHelp =
    "usage: edgemt translate -m MODEL [options]\n"
    "\n"
    "Reads one sentence per line and writes one translation per line, in the\n"
    "same order. Lines are translated in batches; an empty (or blank) line\n"
    "gives an empty line.\n"
    "\n"
    "options:\n"
    "  -m, --model FILE        model file (.emt)                     [required]\n"
    "  -i, --input FILE        read from FILE                        [stdin]\n"
    "  -o, --output FILE       write to FILE                         [stdout]\n"
    "      --beam N            beam size, 1 = greedy (1..16)         [the model's]\n"
    "      --length-penalty A  beam score = logprob / length^A       [the model's]\n"
    "      --word-penalty W    Marian models: score - W * length     [the model's]\n"
    "      --max-len N         at most N generated tokens            [the model's max length]\n"
    "      --max-len-a A       at most floor(A * source tokens + B)  [the model's]\n"
    "      --max-len-b B       generated tokens (with --max-len-a)   [the model's]\n"
    "      --target-prefix L   target language of a multi-target model:\n"
    "                          its token (>>L<<, e.g. fra) is put first in\n"
    "                          every source ('edgemt inspect' lists them)\n"
    "      --threads N         worker threads (1..256)               [1]\n"
    "                          more than the CPUs this process may use\n"
    "                          runs slower and gets a warning\n"
    "      --batch N           sentences per batch (1..256)          [16; 1 on a terminal]\n"
    "      --max-line-bytes N  longest input line read, in bytes     [65536]\n"
    "                          (1..67108864); memory stays bounded by it\n"
    "      --copy-model        read the model file into memory instead of\n"
    "                          mapping it (see 'model file' below)\n"
    "  -h, --help              show this help\n"
    "\n"
    "Decoding defaults are the model's: those its source framework's own\n"
    "translator uses (OpenNMT-py, Marian, Hugging Face), recorded by\n"
    "edgemt-convert, or for --from torch models beam 1, length penalty 1.0,\n"
    "at most 2 * source tokens + 10; 'edgemt inspect' prints them. The search\n"
    "always follows the model's framework's rules.\n"
    "\n"
    "Every input line gives exactly one output line. A line is not translated,\n"
    "and gives an empty output line plus an error naming it on stderr, when\n"
    "it is longer than --max-line-bytes (it is skipped unread, not split), is\n"
    "not valid UTF-8, has more tokens than the model's position table (counting\n"
    "EOS), or when the model computes NaN or infinite scores for it (an\n"
    "overflow, e.g. in an fp16 model); the other lines are translated as usual\n"
    "and edgemt exits with status 1 at the end.\n"
    "\n"
    "model file: by default MODEL is memory-mapped and its weights are read in\n"
    "place. Do not truncate or rewrite it in place while edgemt runs: edgemt\n"
    "then stops with status 1 and a 'bus error reading the model file' message.\n"
    "Replacing it by renaming a new file over it is safe (edgemt-convert writes\n"
    "that way). --copy-model reads the whole file at start instead, so nothing\n"
    "done to the file later matters, at the cost of its size in memory.\n"
    "MODEL must be a regular file (a FIFO or a device is refused).\n"
    "\n"
    "exit status: 0 ok, 1 model or input error, 2 bad usage\n";

struct Settings {
  std::string model_path;
  std::string input_path;
  std::string output_path;
  DecodeOptions decode;
  // Which of decode's values the command line set (the rest are the model's).
  bool beam_set = false;
  bool length_penalty_set = false;
  bool word_penalty_set = false;
  bool max_len_a_set = false;
  bool max_len_b_set = false;
  std::string target_prefix;
  size_t max_len = 0;
  size_t threads = 1;
  size_t batch = 16;
  size_t max_line_bytes = kDefaultMaxInputBytes;
  bool copy_model = false;
};

bool read_settings(int argc, char** argv, Settings* settings, std::string* error) {
  const std::vector<FlagSpec> specs = {
      {"model", 'm', true},     {"input", 'i', true},     {"output", 'o', true},
      {"beam", '\0', true},     {"length-penalty", '\0', true},
      {"max-len", '\0', true},  {"max-len-a", '\0', true}, {"max-len-b", '\0', true},
      {"threads", '\0', true},  {"batch", '\0', true},    {"help", 'h', false},
      {"max-line-bytes", '\0', true}, {"copy-model", '\0', false},
      {"word-penalty", '\0', true}, {"target-prefix", '\0', true},
  };
  Arguments args;
  if (!args.parse(argc, argv, 2, specs, error)) return false;
  if (args.has("help")) return true;
  if (!args.positional().empty()) {
    *error = "unexpected argument '" + args.positional()[0] + "'";
    return false;
  }
  settings->model_path = args.get("model", "");
  if (settings->model_path.empty()) {
    *error = "a model is required (-m MODEL)";
    return false;
  }
  settings->input_path = args.get("input", "");
  settings->output_path = args.get("output", "");
  settings->copy_model = args.has("copy-model");
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
  const size_t default_batch = isatty(STDIN_FILENO) && settings->input_path.empty() ? 1 : 16;
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

// The model's decoding defaults, overridden by what the command line set.
DecodeOptions decode_settings(const Model& model, const Settings& settings) {
  DecodeOptions decode = decode_options(model);
  if (settings.beam_set) decode.beam_size = settings.decode.beam_size;
  if (settings.length_penalty_set) decode.length_penalty = settings.decode.length_penalty;
  if (settings.word_penalty_set) decode.word_penalty = settings.decode.word_penalty;
  if (settings.max_len_a_set) decode.max_len_a = settings.decode.max_len_a;
  if (settings.max_len_b_set) decode.max_len_b = settings.decode.max_len_b;
  return decode;
}

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

bool is_blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; });
}

// One input line: its text, or only its length when it was too long to keep.
struct InputLine {
  std::string text;
  size_t bytes = 0;
  bool too_long = false;
};

// A translation is one output line: a line break inside it (a model's
// pieces could decode to one) would shift every later line.
void keep_on_one_line(std::string* text) {
  std::replace(text->begin(), text->end(), '\n', ' ');
  std::replace(text->begin(), text->end(), '\r', ' ');
}

// Translates one batch of lines; failed lines get an empty output and an
// error on stderr. Returns false if any line failed.
bool translate_batch(const std::vector<InputLine>& lines, size_t first_line_number,
                     const Tokenizer& tokenizer, const int32_t* prefix, Translator& translator,
                     const DecodeOptions& decode, size_t max_line_bytes, std::ostream& out) {
  const Limits& limits = translator.limits();
  bool all_ok = true;
  std::vector<std::string> outputs(lines.size());
  std::vector<std::vector<int32_t>> sources(lines.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t line_number = first_line_number + i;
    if (lines[i].too_long) {
      std::fprintf(stderr,
                   "edgemt: line %zu: %zu bytes, more than --max-line-bytes (%zu); line left "
                   "empty\n",
                   line_number, lines[i].bytes, max_line_bytes);
      all_ok = false;
      continue;
    }
    if (is_blank(lines[i].text)) continue;
    const Status status = tokenizer.encode(lines[i].text, &sources[i]);
    if (status.is_ok() && prefix != nullptr) sources[i].insert(sources[i].begin(), *prefix);
    if (!status.is_ok()) {
      std::fprintf(stderr, "edgemt: line %zu: %s; line left empty\n", line_number,
                   status.message());
      all_ok = false;
    } else if (sources[i].size() > limits.max_source_len) {
      std::fprintf(stderr,
                   "edgemt: line %zu: source has %zu tokens, more than the %zu the model takes; "
                   "line left empty\n",
                   line_number, sources[i].size(), limits.max_source_len);
      all_ok = false;
    } else {
      todo.push_back(i);
    }
  }
  if (!todo.empty()) {
    std::vector<TokenSpan> spans(todo.size());
    std::vector<std::vector<int32_t>> buffers(todo.size(), std::vector<int32_t>(limits.max_target_len));
    std::vector<Translation> results(todo.size());
    for (size_t k = 0; k < todo.size(); ++k) {
      spans[k].ids = sources[todo[k]].data();
      spans[k].length = sources[todo[k]].size();
      results[k].tokens = buffers[k].data();
      results[k].capacity = buffers[k].size();
    }
    const Status status = translator.translate(spans.data(), spans.size(), decode, results.data());
    if (!status.is_ok()) {
      std::fprintf(stderr, "edgemt: lines %zu-%zu: %s; lines left empty\n", first_line_number,
                   first_line_number + lines.size() - 1, status.message());
      all_ok = false;
    } else {
      for (size_t k = 0; k < todo.size(); ++k) {
        const size_t line_number = first_line_number + todo[k];
        if (results[k].status != StatusCode::kOk) {
          std::fprintf(stderr, "edgemt: line %zu: %s; line left empty\n", line_number,
                       results[k].error);
          all_ok = false;
          continue;
        }
        const Status decoded =
            tokenizer.decode(results[k].tokens, results[k].length, &outputs[todo[k]]);
        if (!decoded.is_ok()) {
          std::fprintf(stderr, "edgemt: line %zu: %s; line left empty\n", line_number,
                       decoded.message());
          outputs[todo[k]].clear();
          all_ok = false;
        }
        keep_on_one_line(&outputs[todo[k]]);
      }
    }
  }
  for (const std::string& text : outputs) out << text << '\n';
  out.flush();
  return all_ok;
}

}  // namespace

int run_translate(int argc, char** argv) {
  Settings settings;
  std::string error;
  if (!read_settings(argc, argv, &settings, &error)) {
    std::fprintf(stderr, "edgemt translate: %s\n(run 'edgemt translate --help')\n", error.c_str());
    return kExitUsage;
  }
  if (settings.model_path.empty()) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  std::unique_ptr<Model> model;
  LoadOptions load_options;
  load_options.mode = settings.copy_model ? LoadMode::kCopy : LoadMode::kMap;
  if (!settings.copy_model) exit_cleanly_on_bus_error(settings.model_path);
  Status status = Model::load(settings.model_path.c_str(), load_options, &model);
  if (!status.is_ok()) {
    std::fprintf(stderr, "edgemt: cannot load model '%s': %s\n", settings.model_path.c_str(),
                 status.message());
    return kExitFailure;
  }
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Translator> translator;
  TranslatorOptions options;
  options.threads = settings.threads;
  TokenizerOptions tokenizer_options;
  tokenizer_options.max_input_bytes = settings.max_line_bytes;
  status = Tokenizer::create(*model, tokenizer_options, &tokenizer);
  if (status.is_ok()) status = Translator::create(*model, options, &translator);
  const DecodeOptions decode = decode_settings(*model, settings);
  if (status.is_ok()) {
    const size_t longest = model->max_sequence_length();
    Limits limits;
    limits.max_batch = settings.batch;
    limits.max_beam = decode.beam_size;
    limits.max_source_len = longest;
    limits.max_target_len = settings.max_len == 0 ? longest : std::min(settings.max_len, longest);
    status = translator->prepare(limits);
  }
  if (!status.is_ok()) {
    std::fprintf(stderr, "edgemt: %s\n", status.message());
    return kExitFailure;
  }
  int32_t prefix_id = 0;
  if (!settings.target_prefix.empty() &&
      !target_prefix_id(*tokenizer, settings.target_prefix, &prefix_id, &error)) {
    std::fprintf(stderr, "edgemt translate: %s\n", error.c_str());
    return kExitUsage;
  }
  const int32_t* prefix = settings.target_prefix.empty() ? nullptr : &prefix_id;

  int input_fd = STDIN_FILENO;
  if (!settings.input_path.empty()) {
    input_fd = ::open(settings.input_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (input_fd < 0) {
      std::fprintf(stderr, "edgemt: cannot open input '%s': %s\n", settings.input_path.c_str(),
                   std::strerror(errno));
      return kExitFailure;
    }
  }
  std::ofstream output_file;
  if (!settings.output_path.empty()) {
    output_file.open(settings.output_path);
    if (!output_file) {
      std::fprintf(stderr, "edgemt: cannot open output '%s'\n", settings.output_path.c_str());
      if (input_fd != STDIN_FILENO) ::close(input_fd);
      return kExitFailure;
    }
  }
  std::ostream& out = settings.output_path.empty() ? std::cout : output_file;

  bool all_ok = true;
  size_t line_number = 1;
  std::vector<InputLine> batch;
  LineReader reader(input_fd, settings.max_line_bytes);
  InputLine line;
  LineReader::Result result;
  while ((result = reader.next(&line.text, &line.bytes)) == LineReader::Result::kLine ||
         result == LineReader::Result::kTooLong) {
    line.too_long = result == LineReader::Result::kTooLong;
    if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
    batch.push_back(line);
    if (batch.size() == settings.batch) {
      all_ok &= translate_batch(batch, line_number, *tokenizer, prefix, *translator, decode,
                                settings.max_line_bytes, out);
      line_number += batch.size();
      batch.clear();
    }
  }
  if (!batch.empty()) {
    all_ok &= translate_batch(batch, line_number, *tokenizer, prefix, *translator, decode,
                              settings.max_line_bytes, out);
  }
  if (input_fd != STDIN_FILENO) ::close(input_fd);
  if (result == LineReader::Result::kError) {
    std::fprintf(stderr, "edgemt: error reading the input: %s\n", std::strerror(reader.error()));
    return kExitFailure;
  }
  if (!out) {
    std::fprintf(stderr, "edgemt: error writing the output\n");
    return kExitFailure;
  }
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace edgemt::cli
