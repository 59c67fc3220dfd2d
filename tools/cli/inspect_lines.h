// The line layout of `edgemt inspect`: "label  value" lines that fit a
// terminal, and the number formats they use.
//
// Every line is at most kInspectWidth columns: a value too long for its line
// wraps at spaces onto lines indented to kValueColumn, so a long checkpoint
// path, sha256 or compute-path description never makes the summary wider
// than a screen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace edgemt::cli {

inline constexpr size_t kInspectWidth = 100;
// Where values start: "  " + a 16-character label + " ", the column the
// families' describe_config() lines use too.
inline constexpr size_t kValueColumn = 19;

// printf into a std::string.
std::string text_printf(const char* format, ...) __attribute__((format(printf, 1, 2)));

// Prints `label` after `indent` spaces and `value` from kValueColumn (one
// space after the label if it is longer), wrapped to kInspectWidth; a word
// longer than a whole line is cut.
void print_field(size_t indent, const char* label, const std::string& value);

// Prints a line as it is (a family's describe_config() line), wrapped as
// print_field's values are if wider than kInspectWidth.
void print_wrapped_line(const std::string& line);

// "8.1 MiB", "256.0 KiB", "980 B": sizes at a glance (exact bytes are in
// --tensors).
std::string human_bytes(uint64_t bytes);

// 4205568 -> "4,205,568".
std::string grouped_number(uint64_t value);

}  // namespace edgemt::cli
