#include "format/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace edgemt {
namespace {

// Closes a descriptor on every return path (the mapping outlives it).
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

MappedFile::~MappedFile() { reset(); }

MappedFile::MappedFile(MappedFile&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

void MappedFile::reset() {
  if (data_ != nullptr) {
    ::munmap(const_cast<uint8_t*>(data_), size_);
  }
  data_ = nullptr;
  size_ = 0;
}

Status MappedFile::open(const char* path, MappedFile* out) {
  if (path == nullptr || out == nullptr) {
    return Status::error(StatusCode::kInvalidArgument, "MappedFile::open: null argument");
  }
  out->reset();

  int fd = -1;
  do {
    fd = ::open(path, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int error = errno;
    const StatusCode code = error == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError;
    return Status::error(code, "cannot open model file '%s': %s", path, std::strerror(error));
  }
  FileDescriptor file(fd);

  struct stat info;
  if (::fstat(file.get(), &info) != 0) {
    const int error = errno;
    return Status::error(StatusCode::kIoError, "cannot stat model file '%s': %s", path,
                         std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    return Status::error(StatusCode::kIoError, "model file '%s' is not a regular file", path);
  }
  if (info.st_size <= 0) {
    return Status::error(StatusCode::kInvalidModel, "model file '%s' is empty", path);
  }
  if (static_cast<uint64_t>(info.st_size) > SIZE_MAX) {
    return Status::error(StatusCode::kIoError,
                         "model file '%s' (%lld bytes) is larger than the address space", path,
                         static_cast<long long>(info.st_size));
  }
  const size_t size = static_cast<size_t>(info.st_size);

  void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.get(), 0);
  if (address == MAP_FAILED) {
    const int error = errno;
    return Status::error(StatusCode::kIoError, "cannot map model file '%s' (%zu bytes): %s", path,
                         size, std::strerror(error));
  }
  out->data_ = static_cast<const uint8_t*>(address);
  out->size_ = size;
  return Status::ok();
}

void MappedFile::release_pages(const void* data, size_t size) const {
  const auto* begin = static_cast<const uint8_t*>(data);
  if (data_ == nullptr || begin < data_ || begin + size > data_ + size_) return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  // Only whole pages inside the range: neighbours may still be needed.
  const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;
  const uintptr_t last = (reinterpret_cast<uintptr_t>(begin) + size) / page * page;
  if (last > first) {
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  }
}

}  // namespace edgemt
