// Word numbers across a split line: which word of the whole line (or of its
// joined translation) a word of one sentence is, so that --align numbers a
// split line's words as `line.split()` does.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace edgemt::cli {

// For each whitespace word of `part`, which starts at byte `offset` of
// `whole`: the index of the word of `whole` that holds its first character
// (0 when none does: `part` not inside `whole`). Whitespace: ASCII space,
// \t, \n, \v, \f, \r. Example: whole "A b. C d.", part "C d." at 5 -> {2, 3}.
std::vector<size_t> words_in_whole(std::string_view whole, std::string_view part, size_t offset);

}  // namespace edgemt::cli
