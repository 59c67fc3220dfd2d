// LineReader: input lines from a file descriptor, with bounded memory.
//
// std::getline keeps the whole of a line however long it is, so one 50 MB
// line (in a file of short ones) once took the CLI's memory to 4 GB. This
// reader keeps at most `max_line_bytes` of a line: a longer one is read
// through to its end and reported as kTooLong with its length, never stored,
// so memory is bounded by the limit, whatever the input. on_too_long()
// tells the caller as soon as a line passes the limit while more of it is
// still to come: a line that never ends (/dev/zero, a stream without
// newlines) is then reported at once, not never.
//
// Lines end at '\n' (not stored); a last line without one still counts. A
// '\r' before the '\n' is part of the line (the caller decides about CRLF).
// The reader owns a fixed buffer; it does not own or close the descriptor.
//
// Interactive input: line_ready() says, without blocking, whether a whole
// line is already there, so that a caller collecting a batch can translate
// what it has instead of waiting for lines a program on the other end of a
// pipe will only send after it has read the translations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace edgemt::cli {

class LineReader {
 public:
  enum class Result { kLine, kTooLong, kEnd, kError };

  LineReader(int fd, size_t max_line_bytes);

  // kLine: *line holds the next line. kTooLong: the line had *bytes bytes,
  // more than max_line_bytes; *line is empty and the reader is at the next
  // line. kEnd: no more input. kError: read() failed (error() tells errno).
  Result next(std::string* line, size_t* bytes);
  int error() const { return error_; }

  // `notify` is called (from inside next()) once per too-long line, when
  // the line has passed max_line_bytes and its end is not yet read; next()
  // then reads on to the end and returns kTooLong as before.
  void on_too_long(std::function<void()> notify) { notify_too_long_ = std::move(notify); }

  // True when next() would return without waiting for the writer: a '\n'
  // is buffered, the input has ended or failed, or the buffer is full of
  // one long line (next() reads the rest of it, which the writer has
  // started). Otherwise reads what the descriptor has now (poll() with
  // timeout 0, then read(), which then does not block) and looks again;
  // false when nothing more is there. A regular file is always ready.
  bool line_ready();

  // Bytes next() has consumed so far: lines and their '\n's (too-long lines
  // included). With the input's size this gives the fraction done.
  uint64_t consumed_bytes() const { return consumed_; }

 private:
  bool fill();  // false at end of input or on error

  int fd_;
  size_t max_line_bytes_;
  std::vector<char> buffer_;
  size_t begin_ = 0;  // unread bytes are buffer_[begin_, end_)
  size_t end_ = 0;
  bool at_end_ = false;
  int error_ = 0;
  uint64_t consumed_ = 0;
  std::function<void()> notify_too_long_;
};

}  // namespace edgemt::cli
