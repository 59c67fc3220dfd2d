#include "cli/translate_output.h"

#include "cli/json_writer.h"

namespace edgemt::cli {

namespace {

void write_links(const std::vector<WordPair>& links, JsonWriter* json) {
  json->begin_array();
  for (const WordPair& link : links) {
    json->begin_array()
        .value(static_cast<uint64_t>(link.source_word))
        .value(static_cast<uint64_t>(link.target_word))
        .end_array();
  }
  json->end_array();
}

void write_tokens(const SentenceWork& sentence, const PieceSpeller& pieces, JsonWriter* json) {
  for (const int32_t id : sentence.tokens) json->value(pieces.piece(TextSide::kTarget, id));
}

}  // namespace

LineWriter::LineWriter(std::ostream& out, const OutputOptions& options, const PieceSpeller* pieces)
    : out_(out), options_(options), pieces_(pieces) {}

void LineWriter::write(const LineWork& line, const LineAlignment* alignment) {
  if (options_.json) {
    out_ << json_line(line, alignment) << '\n';
    return;
  }
  const std::string& translation = line.failed() ? std::string() : line.translation;
  if (!options_.align) {
    out_ << translation << '\n';
    return;
  }
  // As Marian's --alignment: every line has the separator, also an empty one.
  out_ << translation << " ||| " << (alignment != nullptr ? format_alignment(alignment->line) : "")
       << '\n';
}

std::string LineWriter::json_line(const LineWork& line, const LineAlignment* alignment) const {
  JsonWriter json;
  json.begin_object().key("line").value(static_cast<uint64_t>(line.number));
  if (line.failed()) {
    json.key("translation").value("").key("error").value(line.error).end_object();
    return json.text();
  }
  json.key("translation").value(line.translation);
  // A line of several sentences: its score is their sum (log-probabilities
  // of independent translations add), its tokens all of theirs in order.
  double score = 0.0;
  for (const SentenceWork& sentence : line.sentences) score += static_cast<double>(sentence.score);
  json.key("score").value(score);
  json.key("tokens").begin_array();
  for (const SentenceWork& sentence : line.sentences) write_tokens(sentence, *pieces_, &json);
  json.end_array();
  if (options_.align) {
    json.key("alignment");
    write_links(alignment != nullptr ? alignment->line : std::vector<WordPair>(), &json);
  }
  if (line.split) {
    json.key("sentences").begin_array();
    for (size_t k = 0; k < line.sentences.size(); ++k) {
      const SentenceWork& sentence = line.sentences[k];
      json.begin_object()
          .key("source")
          .value(std::string_view(line.text).substr(sentence.begin, sentence.end - sentence.begin))
          .key("translation")
          .value(sentence.translation)
          .key("score")
          .value(static_cast<double>(sentence.score))
          .key("tokens")
          .begin_array();
      write_tokens(sentence, *pieces_, &json);
      json.end_array();
      if (options_.align) {
        json.key("alignment");
        write_links(alignment != nullptr && k < alignment->sentences.size() ? alignment->sentences[k]
                                                                            : std::vector<WordPair>(),
                    &json);
      }
      json.end_object();
    }
    json.end_array();
  }
  json.end_object();
  return json.text();
}

}  // namespace edgemt::cli
