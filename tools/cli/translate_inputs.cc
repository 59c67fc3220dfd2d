#include "cli/translate_inputs.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace edgemt::cli {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int texts_input_fd(const std::vector<std::string>& texts, std::string* error) {
  const int fd = ::memfd_create("edgemt-texts", MFD_CLOEXEC);
  if (fd < 0) {
    *error = std::string("cannot hold the texts in memory: ") + std::strerror(errno);
    return -1;
  }
  std::string data;
  for (const std::string& text : texts) {
    std::string line = text;
    std::replace(line.begin(), line.end(), '\n', ' ');
    std::replace(line.begin(), line.end(), '\r', ' ');
    data += line;
    data += '\n';
  }
  if (!write_all(fd, data) || ::lseek(fd, 0, SEEK_SET) != 0) {
    *error = std::string("cannot hold the texts in memory: ") + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

std::vector<InputLine> ParagraphJoiner::add(InputLine input) {
  std::vector<InputLine> out;
  const std::string& text = input.line.text;
  const bool blank =
      !input.too_long && std::all_of(text.begin(), text.end(), [](char c) { return is_space(c); });
  if (blank) {
    take_paragraph(&out);
    out.push_back(std::move(input));
    return out;
  }
  size_t begin = 0, end = text.size();
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  const size_t length = input.too_long ? input.bytes : end - begin;
  if (!collecting_) {
    paragraph_ = InputLine();
    paragraph_.line.number = input.line.number;
    collecting_ = true;
  } else {
    paragraph_.bytes += 1;  // the joining space
  }
  paragraph_.bytes += length;
  paragraph_.line.end_offset = input.line.end_offset;
  // Only what stays within the limit is kept: memory stays bounded by it.
  if (paragraph_.bytes <= max_line_bytes_) {
    if (!paragraph_.line.text.empty()) paragraph_.line.text += ' ';
    paragraph_.line.text.append(text, begin, end - begin);
  } else {
    paragraph_.too_long = true;
    std::string().swap(paragraph_.line.text);
  }
  return out;
}

std::vector<InputLine> ParagraphJoiner::finish() {
  std::vector<InputLine> out;
  take_paragraph(&out);
  return out;
}

void ParagraphJoiner::take_paragraph(std::vector<InputLine>* out) {
  if (!collecting_) return;
  collecting_ = false;
  out->push_back(std::move(paragraph_));
  paragraph_ = InputLine();
}

}  // namespace edgemt::cli
