// TranslationQueue: lines in, in order; their sentences through the
// Translator in batches of up to Limits::max_batch sentences (a line's
// sentences may fall into two batches); each line handed on, in input
// order, once all of its sentences are translated.
//
//   add(line) ... add(line)   sentences wait (waiting_sentences())
//   translate_batch()         the next max_batch of them
//   translate_all()           every waiting sentence (end of input, or no
//                             more input ready: an interactive writer waits)
//
// A sentence that fails (the whole translate() call, or the sentence alone:
// kNumericError, a failed detokenization) fails its line: line.error says
// why and the line's other sentences are translated but not used.
// Single-threaded; the Translator and Tokenizer must outlive the queue.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>

#include "cli/translate_work.h"
#include "edgemt/tokenizer.h"
#include "edgemt/translator.h"

namespace edgemt::cli {

class TranslationQueue {
 public:
  // Called for every line, in input order, when it is done (translated,
  // failed or blank); the line is dropped after the call.
  using LineDone = std::function<void(LineWork& line)>;

  // attention: ask for each sentence's attention weights (the translator
  // must be prepared with Limits::attention).
  TranslationQueue(Translator& translator, const Tokenizer& tokenizer, const DecodeOptions& decode,
                   bool attention, LineDone line_done);

  void add(LineWork line);
  size_t waiting_sentences() const { return waiting_; }
  void translate_batch();
  void translate_all();

 private:
  void hand_on_done_lines();

  Translator& translator_;
  const Tokenizer& tokenizer_;
  DecodeOptions decode_;
  bool attention_;
  LineDone line_done_;
  std::deque<LineWork> lines_;
  // The first sentence not given to the translator yet.
  size_t next_line_ = 0;
  size_t next_sentence_ = 0;
  size_t waiting_ = 0;
};

}  // namespace edgemt::cli
