#include "cli/translate_queue.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace edgemt::cli {

namespace {

// A translation is one output line: a line break inside it (a model's
// pieces could decode to one) would shift every later line.
void keep_on_one_line(std::string* text) {
  std::replace(text->begin(), text->end(), '\n', ' ');
  std::replace(text->begin(), text->end(), '\r', ' ');
}

std::string sentence_prefix(const LineWork& line, size_t k) {
  if (!line.split) return "";
  return "sentence " + std::to_string(k + 1) + " of " + std::to_string(line.sentences.size()) + ": ";
}

void fail(LineWork* line, const std::string& error) {
  if (!line->failed()) line->error = error;
}

}  // namespace

TranslationQueue::TranslationQueue(Translator& translator, const Tokenizer& tokenizer,
                                   const DecodeOptions& decode, bool attention, LineDone line_done)
    : translator_(translator),
      tokenizer_(tokenizer),
      decode_(decode),
      attention_(attention),
      line_done_(std::move(line_done)) {}

void TranslationQueue::add(LineWork line) {
  waiting_ += line.sentences.size();
  lines_.push_back(std::move(line));
  hand_on_done_lines();
}

void TranslationQueue::hand_on_done_lines() {
  while (!lines_.empty() && lines_.front().done()) {
    line_done_(lines_.front());
    lines_.pop_front();
    if (next_line_ > 0) {
      --next_line_;
    } else {
      next_sentence_ = 0;
    }
  }
}

void TranslationQueue::translate_all() {
  while (waiting_ > 0) {
    const size_t before = waiting_;
    translate_batch();
    if (waiting_ == before) break;  // nothing found to translate: never spin
  }
  hand_on_done_lines();
}

void TranslationQueue::translate_batch() {
  struct Place {
    size_t line;
    size_t sentence;
  };
  const Limits& limits = translator_.limits();
  std::vector<Place> batch;
  while (batch.size() < limits.max_batch && next_line_ < lines_.size()) {
    if (next_sentence_ >= lines_[next_line_].sentences.size()) {
      ++next_line_;
      next_sentence_ = 0;
      continue;
    }
    batch.push_back({next_line_, next_sentence_++});
  }
  waiting_ -= batch.size();
  if (batch.empty()) return;

  // Results go straight into each sentence's own buffers: tokens
  // [max_target_len] and, with attention, [max_target_len, source length].
  std::vector<TokenSpan> spans(batch.size());
  std::vector<Translation> results(batch.size());
  for (size_t b = 0; b < batch.size(); ++b) {
    SentenceWork& sentence = lines_[batch[b].line].sentences[batch[b].sentence];
    spans[b].ids = sentence.source.data();
    spans[b].length = sentence.source.size();
    sentence.tokens.resize(limits.max_target_len);
    results[b].tokens = sentence.tokens.data();
    results[b].capacity = sentence.tokens.size();
    if (attention_) {
      sentence.attention.resize(limits.max_target_len * sentence.source.size());
      results[b].attention = sentence.attention.data();
      results[b].attention_capacity = sentence.attention.size();
    }
  }
  const Status status = translator_.translate(spans.data(), spans.size(), decode_, results.data());
  for (size_t b = 0; b < batch.size(); ++b) {
    LineWork& line = lines_[batch[b].line];
    SentenceWork& sentence = line.sentences[batch[b].sentence];
    ++line.translated;
    const Translation& result = results[b];
    if (!status.is_ok()) {
      fail(&line, status.message());
    } else if (result.status != StatusCode::kOk) {
      fail(&line, sentence_prefix(line, batch[b].sentence) + result.error);
    }
    if (!status.is_ok() || result.status != StatusCode::kOk) {
      sentence.tokens.clear();
      sentence.attention.clear();
      continue;
    }
    sentence.tokens.resize(result.length);
    sentence.score = result.score;
    sentence.attention_rows = result.attention_rows;
    sentence.attention_columns = result.attention_columns;
    sentence.attention.resize(result.attention_rows * result.attention_columns);
    const Status decoded =
        tokenizer_.decode(sentence.tokens.data(), sentence.tokens.size(), &sentence.translation);
    if (!decoded.is_ok()) {
      fail(&line, sentence_prefix(line, batch[b].sentence) + decoded.message());
      sentence.translation.clear();
    }
    keep_on_one_line(&sentence.translation);
  }
  hand_on_done_lines();
}

}  // namespace edgemt::cli
