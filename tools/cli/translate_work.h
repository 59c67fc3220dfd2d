// What `edgemt translate` carries for one input line from the reader to the
// output: the line, its sentences (each a source for the translator), then
// their translations, or the reason the line failed.
//
// A line without splitting, or with one sentence, has one SentenceWork
// spanning the whole line; a blank line and a failed line have none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace edgemt::cli {

struct SentenceWork {
  size_t begin = 0;  // its bytes in the line: [begin, end)
  size_t end = 0;
  std::vector<int32_t> source;  // source ids: [target prefix] pieces [EOS]
  // Filled by the translator:
  std::vector<int32_t> tokens;  // generated target ids, without EOS
  float score = 0.0f;           // log-probability (beam: length-normalized)
  // With attention: [attention_rows, attention_columns] row-major; row t is
  // output t's distribution over the source ids (a last row for EOS when
  // rows == tokens.size() + 1).
  std::vector<float> attention;
  size_t attention_rows = 0;
  size_t attention_columns = 0;
  std::string translation;  // detokenized, on one line
};

struct LineWork {
  size_t number = 0;         // 1-based input line number
  uint64_t end_offset = 0;   // input bytes consumed through this line's '\n'
  std::string text;          // the line without '\n' (and without a final '\r')
  std::vector<SentenceWork> sentences;
  size_t translated = 0;     // sentences the translator has finished (failed ones too)
  bool split = false;        // the sentences are a split of the line (more than one)
  std::string error;         // not empty: the line failed, and why
  std::string translation;   // the output line: the sentences' translations joined

  bool failed() const { return !error.empty(); }
  // Every sentence has been through the translator (a line that failed
  // before translating has none). A line whose one sentence failed is done
  // only with the others: the queue's count of waiting sentences needs them.
  bool done() const { return translated == sentences.size(); }
};

}  // namespace edgemt::cli
