#include "cli/progress_bar.h"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace edgemt::cli {

namespace {

constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
constexpr size_t kBarCells = 20;

// Columns of the terminal on stderr; a bar wider than it would wrap, and
// '\r' would then redraw only its last row.
size_t terminal_columns() {
  winsize size = {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

std::string clock_text(double seconds) {
  const auto total = static_cast<unsigned long long>(seconds + 0.5);
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof(text), "%llu:%02llu:%02llu", total / 3600, total / 60 % 60,
                  total % 60);
  } else {
    std::snprintf(text, sizeof(text), "%llu:%02llu", total / 60, total % 60);
  }
  return text;
}

void write_stderr(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

ProgressBar::ProgressBar(bool enabled, uint64_t total_bytes)
    : enabled_(enabled),
      total_bytes_(total_bytes),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

std::string ProgressBar::format(size_t lines, size_t sentences, uint64_t bytes,
                                uint64_t total_bytes, double seconds) {
  std::string text = "edgemt: ";
  char part[96];
  if (total_bytes > 0) {
    const double fraction = std::min(1.0, static_cast<double>(bytes) / static_cast<double>(total_bytes));
    const auto filled = static_cast<size_t>(fraction * static_cast<double>(kBarCells));
    text += "[" + std::string(filled, '#') + std::string(kBarCells - filled, '.') + "]";
    std::snprintf(part, sizeof(part), " %3d%%  ", static_cast<int>(fraction * 100.0));
    text += part;
  }
  std::snprintf(part, sizeof(part), "%zu lines  %zu sent", lines, sentences);
  text += part;
  if (seconds > 0.0) {
    std::snprintf(part, sizeof(part), "  %.1f sent/s", static_cast<double>(sentences) / seconds);
    text += part;
  }
  // ETA from the bytes done so far: lines of a file are alike enough on
  // average, and a byte count is what the file's size gives.
  if (total_bytes > 0 && bytes > 0 && bytes < total_bytes && seconds > 0.0) {
    const double rest = seconds * static_cast<double>(total_bytes - bytes) / static_cast<double>(bytes);
    text += "  ETA " + clock_text(rest);
  }
  return text;
}

void ProgressBar::draw() {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string text = format(lines_, sentences_, bytes_, total_bytes_, seconds);
  const size_t columns = terminal_columns();
  if (text.size() >= columns) text.resize(columns > 1 ? columns - 1 : 0);
  // Spaces over what is left of a longer previous drawing.
  const size_t padding = shown_width_ > text.size() ? shown_width_ - text.size() : 0;
  write_stderr("\r" + text + std::string(padding, ' '));
  shown_width_ = text.size() + padding;
  last_draw_ = std::chrono::steady_clock::now();
  drawn_once_ = true;
}

void ProgressBar::clear() {
  if (shown_width_ == 0) return;
  write_stderr("\r" + std::string(shown_width_, ' ') + "\r");
  shown_width_ = 0;
}

void ProgressBar::update(size_t lines, size_t sentences, uint64_t bytes) {
  lines_ = lines;
  sentences_ = sentences;
  bytes_ = bytes;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!drawn_once_ || shown_width_ == 0 || now - last_draw_ >= kRedrawInterval) draw();
}

void ProgressBar::finish() {
  if (!enabled_) return;
  draw();
  clear();
}

void ProgressBar::print_above(const std::string& text) {
  if (enabled_) clear();
  write_stderr(text);
}

bool progress_wanted_by_default(int input_fd) {
  return ::isatty(input_fd) == 0 && ::isatty(STDERR_FILENO) != 0;
}

uint64_t remaining_input_bytes(int fd) {
  struct stat info = {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) return 0;
  const off_t at = ::lseek(fd, 0, SEEK_CUR);
  const auto size = static_cast<uint64_t>(info.st_size);
  const auto done = at > 0 ? static_cast<uint64_t>(at) : 0;
  return done < size ? size - done : 0;
}

}  // namespace edgemt::cli
