// RegularFile: the one gate a model path goes through. Anything but a
// regular, non-empty file is refused at once, with what it is named.
#include "format/regular_file.h"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "support/model_builder.h"

namespace edgemt {
namespace {

using testing::TempFile;

bool contains(const Status& status, const std::string& text) {
  return std::strstr(status.message(), text.c_str()) != nullptr;
}

// A path in $TMPDIR that does not exist yet, removed on destruction.
class TempPath {
 public:
  explicit TempPath(const char* tag) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/edgemt-" + tag + "-" +
            std::to_string(::getpid());
    ::unlink(path_.c_str());
  }
  ~TempPath() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST_CASE("format/regular_file: a regular file opens with its size") {
  TempFile file({1, 2, 3, 4, 5}, "regular");
  RegularFile opened;
  const Status status = RegularFile::open(file.path().c_str(), &opened);
  CHECK_MESSAGE(status.is_ok(), std::string(status.message()));
  CHECK(opened.size() == 5);
  CHECK(opened.descriptor() >= 0);
}

// Issue 13, defect 5: open(O_RDONLY) of a FIFO blocks until a writer opens
// it, so a FIFO as model path hung the process. It must be refused at once.
// If open() does block, the test opens the writer end itself after 5 s (so
// the test fails instead of hanging).
TEST_CASE("format/regular_file: a FIFO is refused without waiting for a writer") {
  TempPath fifo("fifo");
  REQUIRE(::mkfifo(fifo.path().c_str(), 0600) == 0);
  std::atomic<bool> done{false};
  Status status;
  std::thread opener([&] {
    RegularFile opened;
    status = RegularFile::open(fifo.path().c_str(), &opened);
    done = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const bool returned_in_time = done;
  if (!returned_in_time) {
    const int writer = ::open(fifo.path().c_str(), O_WRONLY | O_NONBLOCK);  // unblocks it
    if (writer >= 0) ::close(writer);
  }
  opener.join();
  CHECK_MESSAGE(returned_in_time, "RegularFile::open blocked on a FIFO");
  CHECK(status.code() == StatusCode::kIoError);
  CHECK_MESSAGE(contains(status, "is a FIFO, not a regular file"), std::string(status.message()));
}

TEST_CASE("format/regular_file: directories, devices and sockets are named and refused") {
  RegularFile opened;
  Status status = RegularFile::open("/", &opened);
  CHECK(status.code() == StatusCode::kIoError);
  CHECK_MESSAGE(contains(status, "is a directory"), std::string(status.message()));
  status = RegularFile::open("/dev/null", &opened);
  CHECK(status.code() == StatusCode::kIoError);
  CHECK_MESSAGE(contains(status, "is a character device"), std::string(status.message()));
  CHECK(opened.descriptor() < 0);

  TempPath socket_path("socket");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", socket_path.path().c_str());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    status = RegularFile::open(socket_path.path().c_str(), &opened);
    CHECK(status.code() != StatusCode::kOk);  // open() of a socket fails with ENXIO
  }
  ::close(fd);
}

TEST_CASE("format/regular_file: missing and empty files") {
  RegularFile opened;
  Status status = RegularFile::open("/nonexistent/edgemt/model.emt", &opened);
  CHECK(status.code() == StatusCode::kNotFound);
  TempFile empty({}, "empty");
  status = RegularFile::open(empty.path().c_str(), &opened);
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK_MESSAGE(contains(status, "is empty"), std::string(status.message()));
}

}  // namespace
}  // namespace edgemt
