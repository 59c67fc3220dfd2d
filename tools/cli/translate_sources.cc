#include "cli/translate_sources.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "edgemt/sentences.h"
#include "edgemt/utf8.h"

namespace edgemt::cli {

namespace {

bool is_blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
  });
}

}  // namespace

SourceMaker::SourceMaker(const Tokenizer& tokenizer, SourceOptions options)
    : tokenizer_(tokenizer), options_(std::move(options)) {}

void SourceMaker::make(LineWork* line, bool too_long, size_t bytes) const {
  line->sentences.clear();
  line->split = false;
  if (too_long) {
    line->error = std::to_string(bytes) + " bytes, more than --max-line-bytes (" +
                  std::to_string(options_.max_line_bytes) + ")";
    return;
  }
  if (is_blank(line->text)) return;
  std::vector<int32_t> ids;
  if (!is_valid_utf8(line->text, nullptr)) {
    // The tokenizer's own message (it names the first bad byte).
    const Status status = tokenizer_.encode(line->text, &ids);
    line->error = status.is_ok() ? "input is not valid UTF-8" : status.message();
    return;
  }
  // Each sentence encoded once, with the target prefix (edgemt/sentences.h).
  const SourceEncoder encode = [this](std::string_view text, std::vector<int32_t>* out) {
    if (!tokenizer_.encode(text, out).is_ok()) return false;
    if (options_.target_prefix != nullptr) out->insert(out->begin(), *options_.target_prefix);
    return true;
  };
  std::vector<EncodedSpan> sources = source_spans(line->text, options_.split_sentences,
                                                  options_.language, options_.max_source_len,
                                                  encode);
  line->split = sources.size() > 1;
  line->sentences.resize(sources.size());
  for (size_t k = 0; k < sources.size(); ++k) {
    SentenceWork& sentence = line->sentences[k];
    sentence.begin = sources[k].span.begin;
    sentence.end = sources[k].span.end;
    sentence.source = std::move(sources[k].ids);
    const std::string which =
        line->split ? "sentence " + std::to_string(k + 1) + " of " + std::to_string(sources.size()) + ": "
                    : "";
    if (!sources[k].encoded) {
      // The tokenizer's own message, asked again.
      const std::string_view text =
          std::string_view(line->text).substr(sentence.begin, sentence.end - sentence.begin);
      line->error = which + tokenizer_.encode(text, &ids).message();
    } else if (sentence.source.size() > options_.max_source_len) {
      line->error = which + "source has " + std::to_string(sentence.source.size()) +
                    " tokens, more than the " + std::to_string(options_.max_source_len) +
                    " the model takes";
    }
    if (line->failed()) {
      line->sentences.clear();
      line->split = false;
      return;
    }
  }
}

std::string join_translations(const LineWork& line) {
  if (line.sentences.empty()) return "";
  if (!line.split) return line.sentences[0].translation;
  std::vector<SentenceSpan> spans;
  std::vector<std::string> translations;
  for (const SentenceWork& sentence : line.sentences) {
    spans.push_back({sentence.begin, sentence.end});
    translations.push_back(sentence.translation);
  }
  return join_sentences(line.text, spans, translations);
}

}  // namespace edgemt::cli
