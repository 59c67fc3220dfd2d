// edgemt translate: lines in, one translation per line out, in order.
//
// Wiring only:
//   TranslateSettings (flags) -> TranslateEngine (model, tokenizer, prepared
//   translator) -> the loop: LineReader -> SourceMaker (sentences, source
//   ids) -> TranslationQueue (batches of sentences through the translator)
//   -> LineFinisher (stderr messages, output line, pictures, progress).
//
// Batches: sentences are translated once --batch of them wait, and also
// whenever no further whole line can be read without waiting, so that a
// program writing one line into a pipe and waiting for its translation gets
// it. Input from a file (or a fast pipe) always has the next line ready, so
// batches still fill. Output is flushed after every batch.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>

#include "cli/commands.h"
#include "cli/line_reader.h"
#include "cli/progress_bar.h"
#include "cli/same_file.h"
#include "cli/translate_engine.h"
#include "cli/translate_finisher.h"
#include "cli/translate_inputs.h"
#include "cli/translate_queue.h"
#include "cli/translate_settings.h"
#include "cli/translate_sources.h"

namespace edgemt::cli {
namespace {

SourceMaker make_sources(const TranslateSettings& settings, const TranslateEngine& engine) {
  SourceOptions options;
  options.target_prefix = engine.has_target_prefix ? &engine.target_prefix : nullptr;
  options.max_source_len = engine.translator->limits().max_source_len;
  options.max_line_bytes = settings.max_line_bytes;
  options.split_sentences = settings.split_sentences;
  options.language =
      settings.source_language_set ? settings.source_language : engine.model->source_language();
  return SourceMaker(*engine.tokenizer, options);
}

// Reads every line of input_fd and hands it through the queue; the result
// of the last read (kEnd, or kError).
LineReader::Result translate_input(int input_fd, const TranslateSettings& settings,
                                   const SourceMaker& sources, TranslationQueue& queue,
                                   LineFinisher& finisher, ProgressBar& progress,
                                   int* read_error) {
  LineReader reader(input_fd, settings.max_line_bytes);
  LineReader::Result result;
  size_t line_number = 0;
  // A line past --max-line-bytes is skipped, which means reading it to its
  // end: say so at once (after the lines before it), so that input that
  // never ends a line (/dev/zero) is not read in silence.
  reader.on_too_long([&] {
    queue.translate_all();
    finisher.flush();
    progress.print_above("edgemt: input line " + std::to_string(line_number + 1) +
                         " is longer than --max-line-bytes (" +
                         std::to_string(settings.max_line_bytes) +
                         "); reading on to its end to skip it\n");
  });
  ParagraphJoiner paragraphs(settings.max_line_bytes);
  const auto add = [&](std::vector<InputLine> inputs) {
    for (InputLine& input : inputs) {
      sources.make(&input.line, input.too_long, input.bytes);
      queue.add(std::move(input.line));
    }
  };
  InputLine input;
  while ((result = reader.next(&input.line.text, &input.bytes)) == LineReader::Result::kLine ||
         result == LineReader::Result::kTooLong) {
    input.line.number = ++line_number;
    input.line.end_offset = reader.consumed_bytes();
    input.too_long = result == LineReader::Result::kTooLong;
    std::string& text = input.line.text;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (settings.paragraphs) {
      add(paragraphs.add(std::move(input)));
    } else {
      add({std::move(input)});
    }
    input = InputLine();
    while (queue.waiting_sentences() >= settings.batch) {
      queue.translate_batch();
      finisher.flush();
    }
    // Nothing more to read without waiting: translate what has come, so
    // that a writer waiting for these translations gets them.
    if (!reader.line_ready()) {
      queue.translate_all();
      finisher.flush();
    }
  }
  add(paragraphs.finish());
  queue.translate_all();
  finisher.flush();
  *read_error = reader.error();
  return result;
}

// "" when -o may be opened for writing, else why not: it is the input (the
// -i file, or the file on stdin) or the model file, which opening it would
// empty before it is read.
std::string output_clash(const TranslateSettings& settings) {
  if (settings.output_path.empty()) return "";
  // TEXTs on the command line: no input file to clash with.
  const bool is_input =
      settings.texts.empty() &&
      (settings.input_path.empty() ? is_same_regular_file(STDIN_FILENO, settings.output_path)
                                   : is_same_regular_file(settings.input_path, settings.output_path));
  const char* what = is_input ? "the input file"
                     : is_same_regular_file(settings.model_path, settings.output_path)
                         ? "the model file"
                         : nullptr;
  if (what == nullptr) return "";
  return "output '" + settings.output_path + "' is " + what +
         ": writing it would erase it before it is read; name another output file";
}

}  // namespace

int run_translate(int argc, char** argv) {
  TranslateSettings settings;
  std::string error;
  if (!read_translate_settings(argc, argv, &settings, &error)) {
    std::fprintf(stderr, "edgemt translate: %s\n(run 'edgemt translate --help')\n", error.c_str());
    return kExitUsage;
  }
  if (settings.help) {
    std::fputs(translate_help(), stdout);
    return kExitOk;
  }
  error = output_clash(settings);
  if (!error.empty()) {
    std::fprintf(stderr, "edgemt translate: %s\n(run 'edgemt translate --help')\n", error.c_str());
    return kExitUsage;
  }
  const std::string note = source_language_note(settings);
  if (!note.empty()) std::fprintf(stderr, "edgemt: note: %s\n", note.c_str());
  TranslateEngine engine;
  const int loaded = load_translate_engine(settings, &engine);
  if (loaded != kExitOk) return loaded;

  int input_fd = STDIN_FILENO;
  if (!settings.texts.empty()) {
    input_fd = texts_input_fd(settings.texts, &error);
    if (input_fd < 0) {
      std::fprintf(stderr, "edgemt: %s\n", error.c_str());
      return kExitFailure;
    }
  } else if (!settings.input_path.empty()) {
    input_fd = ::open(settings.input_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (input_fd < 0) {
      std::fprintf(stderr, "edgemt: cannot open input '%s': %s\n", settings.input_path.c_str(),
                   std::strerror(errno));
      return kExitFailure;
    }
  }
  const bool show_progress =
      settings.progress == ProgressMode::kOn ||
      (settings.progress == ProgressMode::kAuto && settings.texts.empty() &&
       progress_wanted_by_default(input_fd));
  ProgressBar progress(show_progress, remaining_input_bytes(input_fd));
  std::ofstream output_file;
  std::ostream& out = settings.output_path.empty() ? std::cout : output_file;
  LineFinisher finisher(settings, engine, out, progress);
  // The --attention folder before the output file: a refused run leaves no
  // empty output behind.
  if (!finisher.prepare(&error)) {
    std::fprintf(stderr, "edgemt: %s\n", error.c_str());
    if (input_fd != STDIN_FILENO) ::close(input_fd);
    return kExitFailure;
  }
  if (!settings.output_path.empty()) {
    output_file.open(settings.output_path);
    if (!output_file) {
      std::fprintf(stderr, "edgemt: cannot open output '%s'\n", settings.output_path.c_str());
      if (input_fd != STDIN_FILENO) ::close(input_fd);
      return kExitFailure;
    }
  }

  const SourceMaker sources = make_sources(settings, engine);
  TranslationQueue queue(*engine.translator, *engine.tokenizer, engine.decode,
                         settings.wants_attention(),
                         [&finisher](LineWork& line) { finisher.finish(line); });
  int read_error = 0;
  const LineReader::Result result =
      translate_input(input_fd, settings, sources, queue, finisher, progress, &read_error);
  progress.finish();
  if (input_fd != STDIN_FILENO) ::close(input_fd);
  if (result == LineReader::Result::kError) {
    std::fprintf(stderr, "edgemt: error reading the input: %s\n", std::strerror(read_error));
    return kExitFailure;
  }
  if (!out) {
    std::fprintf(stderr, "edgemt: error writing the output\n");
    return kExitFailure;
  }
  return finisher.all_ok() ? kExitOk : kExitFailure;
}

}  // namespace edgemt::cli
