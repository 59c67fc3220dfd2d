#include "cli/translate_word_positions.h"

#include <algorithm>

namespace edgemt::cli {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Byte offsets at which the whitespace words of `text` start.
std::vector<size_t> word_starts(std::string_view text) {
  std::vector<size_t> starts;
  for (size_t at = 0; at < text.size(); ++at) {
    if (!is_space(text[at]) && (at == 0 || is_space(text[at - 1]))) starts.push_back(at);
  }
  return starts;
}

}  // namespace

std::vector<size_t> words_in_whole(std::string_view whole, std::string_view part, size_t offset) {
  const std::vector<size_t> whole_starts = word_starts(whole);
  std::vector<size_t> words;
  for (const size_t start : word_starts(part)) {
    const auto after = std::upper_bound(whole_starts.begin(), whole_starts.end(), offset + start);
    const auto count = static_cast<size_t>(after - whole_starts.begin());
    words.push_back(count == 0 ? 0 : count - 1);
  }
  return words;
}

}  // namespace edgemt::cli
