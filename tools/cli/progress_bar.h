// ProgressBar: a one-line status of a long `edgemt translate` on stderr,
//
//   edgemt: [#######.............]  35%  1200 lines  1247 sent  41.3 sent/s  ETA 0:58
//
// redrawn in place ('\r') at most every 100 ms, and cleared at finish() so
// that the shell's prompt and later messages start on a clean line. The
// percentage, bar and ETA need the input's size (a regular file); without
// it only counts and speed are shown. Never writes to stdout.
//
// Other stderr output during the run goes through print_above(), which
// clears the bar first (the next update() draws it again), so that a
// message is never glued to a half-drawn bar. A disabled bar draws nothing
// and print_above() just writes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace edgemt::cli {

class ProgressBar {
 public:
  // total_bytes: the input's size, 0 when unknown (a pipe).
  ProgressBar(bool enabled, uint64_t total_bytes);

  // Lines written so far, the sentences they held and the input bytes they
  // came from. Draws when 100 ms have passed since the last drawing.
  void update(size_t lines, size_t sentences, uint64_t bytes);
  // Draws the final counts once more, then clears the line.
  void finish();
  // Writes `text` (ending with '\n') to stderr below a cleared bar.
  void print_above(const std::string& text);

  bool enabled() const { return enabled_; }

  // The status text for these figures (no '\r'): separate for testing.
  static std::string format(size_t lines, size_t sentences, uint64_t bytes, uint64_t total_bytes,
                            double seconds);

 private:
  void draw();
  void clear();

  bool enabled_;
  uint64_t total_bytes_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  bool drawn_once_ = false;
  size_t lines_ = 0;
  size_t sentences_ = 0;
  uint64_t bytes_ = 0;
  size_t shown_width_ = 0;  // characters on screen now (0: line clear)
};

// Whether a bar belongs on stderr by default: input from a file or a pipe
// (not typed at a terminal) and stderr a terminal that someone watches.
bool progress_wanted_by_default(int input_fd);

// The size of `fd`'s input still to read, when it is a regular file; else 0.
uint64_t remaining_input_bytes(int fd);

}  // namespace edgemt::cli
