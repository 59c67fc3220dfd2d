// cli::is_same_regular_file: one regular file under any name (the path
// itself, another spelling, a hard link, a symlink, an open descriptor) is
// the same; different files, missing files and non-regular files (a FIFO,
// /dev/null) never are. Built into edgemt_cli_tests with
// tools/cli/same_file.cc (tests/CMakeLists.txt).
#include "cli/same_file.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace edgemt::cli {
namespace {

// A temporary folder with the entries a test makes, removed at the end.
struct Folder {
  std::string path;
  std::vector<std::string> entries;
  Folder() {
    char name[] = "/tmp/edgemt-same-file-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path = name;
  }
  ~Folder() {
    for (const std::string& entry : entries) ::unlink(entry.c_str());
    ::rmdir(path.c_str());
  }
  // The path of a new entry `name` (removed at the end).
  std::string entry(const std::string& name) {
    entries.push_back(path + "/" + name);
    return entries.back();
  }
  std::string file(const std::string& name) {
    const std::string full = entry(name);
    std::FILE* out = std::fopen(full.c_str(), "w");
    REQUIRE(out != nullptr);
    std::fputs("x\n", out);
    std::fclose(out);
    return full;
  }
};

TEST_CASE("cli/same_file: a regular file under any name is the same file") {
  Folder folder;
  const std::string input = folder.file("input.txt");
  const std::string other = folder.file("other.txt");
  const std::string hard = folder.entry("hard.txt");
  const std::string soft = folder.entry("soft.txt");
  REQUIRE(::link(input.c_str(), hard.c_str()) == 0);
  REQUIRE(::symlink(input.c_str(), soft.c_str()) == 0);
  for (const std::string& name : {input, hard, soft, folder.path + "/./input.txt"}) {
    INFO(name);
    CHECK(is_same_regular_file(input, name));
  }
  CHECK_FALSE(is_same_regular_file(input, other));
  CHECK_FALSE(is_same_regular_file(input, folder.path + "/missing.txt"));
  CHECK_FALSE(is_same_regular_file(folder.path + "/missing.txt", folder.path + "/missing.txt"));

  const int fd = ::open(input.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  CHECK(is_same_regular_file(fd, soft));
  CHECK_FALSE(is_same_regular_file(fd, other));
  ::close(fd);
}

TEST_CASE("cli/same_file: what is not a regular file never counts") {
  Folder folder;
  const std::string fifo = folder.entry("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_FALSE(is_same_regular_file(fifo, fifo));
  CHECK_FALSE(is_same_regular_file("/dev/null", "/dev/null"));
  CHECK_FALSE(is_same_regular_file(folder.path, folder.path));
  int ends[2];
  REQUIRE(::pipe(ends) == 0);
  CHECK_FALSE(is_same_regular_file(ends[0], "/dev/null"));
  ::close(ends[0]);
  ::close(ends[1]);
}

}  // namespace
}  // namespace edgemt::cli
