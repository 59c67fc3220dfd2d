#include "format/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace edgemt {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a special file";
}

}  // namespace

RegularFile::~RegularFile() { close(); }

RegularFile::RegularFile(RegularFile&& other) noexcept : fd_(other.fd_), size_(other.size_) {
  other.fd_ = -1;
  other.size_ = 0;
}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    size_ = other.size_;
    other.fd_ = -1;
    other.size_ = 0;
  }
  return *this;
}

void RegularFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  size_ = 0;
}

Status RegularFile::open(const char* path, RegularFile* out) {
  if (path == nullptr || out == nullptr) {
    return Status::error(StatusCode::kInvalidArgument, "RegularFile::open: null argument");
  }
  out->close();
  // O_NONBLOCK: a FIFO opens at once instead of waiting for a writer (it is
  // refused below); on a regular file the flag changes nothing.
  int fd = -1;
  do {
    fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int error = errno;
    const StatusCode code = error == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError;
    return Status::error(code, "cannot open model file '%s': %s", path, std::strerror(error));
  }
  out->fd_ = fd;

  struct stat info;
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    out->close();
    return Status::error(StatusCode::kIoError, "cannot stat model file '%s': %s", path,
                         std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    out->close();
    return Status::error(StatusCode::kIoError, "model file '%s' is %s, not a regular file", path,
                         kind_of(info.st_mode));
  }
  if (info.st_size <= 0) {
    out->close();
    return Status::error(StatusCode::kInvalidModel, "model file '%s' is empty", path);
  }
  if (static_cast<uint64_t>(info.st_size) > SIZE_MAX) {
    out->close();
    return Status::error(StatusCode::kIoError,
                         "model file '%s' (%lld bytes) is larger than the address space", path,
                         static_cast<long long>(info.st_size));
  }
  out->size_ = static_cast<size_t>(info.st_size);
  return Status::ok();
}

}  // namespace edgemt
