// LineReader: input lines from a file descriptor, with bounded memory.
//
// std::getline keeps the whole of a line however long it is, so one 50 MB
// line (in a file of short ones) once took the CLI's memory to 4 GB. This
// reader keeps at most `max_line_bytes` of a line: a longer one is read
// through to its end and reported as kTooLong with its length, never stored,
// so memory is bounded by the limit, whatever the input.
//
// Lines end at '\n' (not stored); a last line without one still counts. A
// '\r' before the '\n' is part of the line (the caller decides about CRLF).
// The reader owns a fixed buffer; it does not own or close the descriptor.
#pragma once

#include <cstddef>
#include <string>
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

 private:
  bool fill();  // false at end of input or on error

  int fd_;
  size_t max_line_bytes_;
  std::vector<char> buffer_;
  size_t begin_ = 0;  // unread bytes are buffer_[begin_, end_)
  size_t end_ = 0;
  bool at_end_ = false;
  int error_ = 0;
};

}  // namespace edgemt::cli
