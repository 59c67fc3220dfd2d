// cli::LineReader::line_ready: true when a whole line is buffered or waiting
// in the pipe, false (without blocking) when the writer has sent nothing or
// only part of a line, true at end of input; consumed_bytes counts lines and
// their '\n's. Built into edgemt_cli_tests with tools/cli/line_reader.cc
// (tests/CMakeLists.txt).
#include "cli/line_reader.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <string>

namespace edgemt::cli {
namespace {

// A pipe closed at destruction (each end once).
struct Pipe {
  int read_end = -1;
  int write_end = -1;
  Pipe() {
    int ends[2];
    REQUIRE(::pipe(ends) == 0);
    read_end = ends[0];
    write_end = ends[1];
  }
  ~Pipe() {
    if (read_end >= 0) ::close(read_end);
    close_writer();
  }
  void write(const std::string& text) const {
    REQUIRE(::write(write_end, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  }
  void close_writer() {
    if (write_end >= 0) ::close(write_end);
    write_end = -1;
  }
};

TEST_CASE("cli/line_reader: line_ready follows what the writer has sent") {
  Pipe pipe;
  LineReader reader(pipe.read_end, 100);
  std::string line;
  size_t bytes = 0;
  CHECK_FALSE(reader.line_ready());  // nothing sent: no wait
  pipe.write("one\ntw");
  CHECK(reader.line_ready());
  REQUIRE(reader.next(&line, &bytes) == LineReader::Result::kLine);
  CHECK(line == "one");
  CHECK(reader.consumed_bytes() == 4);
  CHECK_FALSE(reader.line_ready());  // half a line buffered: would wait
  CHECK_FALSE(reader.line_ready());
  pipe.write("o\nthree\n");
  CHECK(reader.line_ready());
  REQUIRE(reader.next(&line, &bytes) == LineReader::Result::kLine);
  CHECK(line == "two");
  CHECK(reader.line_ready());  // "three\n" is buffered
  REQUIRE(reader.next(&line, &bytes) == LineReader::Result::kLine);
  CHECK(line == "three");
  CHECK(reader.consumed_bytes() == 14);
  pipe.write("last");
  CHECK_FALSE(reader.line_ready());
  pipe.close_writer();
  CHECK(reader.line_ready());  // end of input: next() returns at once
  REQUIRE(reader.next(&line, &bytes) == LineReader::Result::kLine);
  CHECK(line == "last");
  CHECK(reader.consumed_bytes() == 18);
  CHECK(reader.line_ready());
  CHECK(reader.next(&line, &bytes) == LineReader::Result::kEnd);
}

TEST_CASE("cli/line_reader: a buffer full of one long line counts as ready") {
  Pipe pipe;
  LineReader reader(pipe.read_end, 1 << 20);
  // More than the 64 KiB buffer without '\n': next() reads the rest itself.
  const std::string long_line(70000, 'x');
  const size_t first_part = 65536;
  pipe.write(long_line.substr(0, first_part));
  CHECK(reader.line_ready());
  pipe.write(long_line.substr(first_part) + "\n");
  std::string line;
  size_t bytes = 0;
  REQUIRE(reader.next(&line, &bytes) == LineReader::Result::kLine);
  CHECK(line.size() == long_line.size());
}

TEST_CASE("cli/line_reader: a too-long line is announced before its end is read") {
  // The writer has sent 100 bytes of a line (limit 10) and nothing more:
  // the reader must say so now, not when (if ever) the line ends. The
  // notification sends the rest, so that next() can return.
  Pipe pipe;
  LineReader reader(pipe.read_end, 10);
  int notified = 0;
  reader.on_too_long([&] {
    ++notified;
    pipe.write("tail\nnext\n");
    pipe.close_writer();
  });
  pipe.write(std::string(100, 'x'));
  std::string line;
  size_t bytes = 0;
  REQUIRE(reader.next(&line, &bytes) == LineReader::Result::kTooLong);
  CHECK(notified == 1);
  CHECK(bytes == 104);
  CHECK(line.empty());
  REQUIRE(reader.next(&line, &bytes) == LineReader::Result::kLine);
  CHECK(line == "next");
  CHECK(notified == 1);
  CHECK(reader.next(&line, &bytes) == LineReader::Result::kEnd);
}

TEST_CASE("cli/line_reader: a too-long line read whole at once needs no announcement") {
  Pipe pipe;
  LineReader reader(pipe.read_end, 10);
  int notified = 0;
  reader.on_too_long([&] { ++notified; });
  pipe.write(std::string(20, 'x') + "\nshort\n");
  pipe.close_writer();
  std::string line;
  size_t bytes = 0;
  REQUIRE(reader.next(&line, &bytes) == LineReader::Result::kTooLong);
  CHECK(bytes == 20);
  REQUIRE(reader.next(&line, &bytes) == LineReader::Result::kLine);
  CHECK(line == "short");
  CHECK(notified == 0);
}

}  // namespace
}  // namespace edgemt::cli
