#include "cli/line_reader.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace edgemt::cli {

namespace {
constexpr size_t kBufferBytes = 1 << 16;
}  // namespace

LineReader::LineReader(int fd, size_t max_line_bytes)
    : fd_(fd), max_line_bytes_(max_line_bytes), buffer_(kBufferBytes) {}

bool LineReader::fill() {
  if (at_end_ || error_ != 0) return false;
  for (;;) {
    const ssize_t got = ::read(fd_, buffer_.data(), buffer_.size());
    if (got > 0) {
      begin_ = 0;
      end_ = static_cast<size_t>(got);
      return true;
    }
    if (got == 0) {
      at_end_ = true;
      return false;
    }
    if (errno != EINTR) {
      error_ = errno;
      return false;
    }
  }
}

bool LineReader::line_ready() {
  for (;;) {
    if (std::memchr(buffer_.data() + begin_, '\n', end_ - begin_) != nullptr) return true;
    if (at_end_ || error_ != 0) return true;
    if (begin_ == 0 && end_ == buffer_.size()) return true;
    pollfd request = {fd_, POLLIN, 0};
    const int polled = ::poll(&request, 1, 0);
    if (polled < 0 && errno == EINTR) continue;
    // A poll() that fails says nothing about the input: let next() find out.
    if (polled < 0) return true;
    if (polled == 0) return false;
    // Readable (or hung up, or failed): read() returns at once. Keep the
    // partial line that is buffered and add to it.
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    const ssize_t got = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (got > 0) {
      end_ += static_cast<size_t>(got);
    } else if (got == 0) {
      at_end_ = true;
    } else if (errno != EINTR && errno != EAGAIN) {
      error_ = errno;
    }
  }
}

LineReader::Result LineReader::next(std::string* line, size_t* bytes) {
  line->clear();
  *bytes = 0;
  bool started = false;
  for (;;) {
    if (begin_ == end_ && !fill()) {
      if (error_ != 0) return Result::kError;
      if (!started) return Result::kEnd;
      break;  // a last line without '\n'
    }
    started = true;
    const char* chunk = buffer_.data() + begin_;
    const size_t available = end_ - begin_;
    const void* newline = std::memchr(chunk, '\n', available);
    const size_t take = newline != nullptr ? static_cast<size_t>(static_cast<const char*>(newline) - chunk)
                                           : available;
    // Store only while the line is within the limit; count every byte.
    if (*bytes + take <= max_line_bytes_) {
      line->append(chunk, take);
    } else if (*bytes <= max_line_bytes_) {
      line->clear();
      line->shrink_to_fit();
      if (newline == nullptr && notify_too_long_) notify_too_long_();
    }
    *bytes += take;
    begin_ += take;
    consumed_ += take;
    if (newline != nullptr) {
      ++begin_;  // the '\n'
      ++consumed_;
      break;
    }
  }
  if (*bytes > max_line_bytes_) {
    line->clear();
    return Result::kTooLong;
  }
  return Result::kLine;
}

}  // namespace edgemt::cli
