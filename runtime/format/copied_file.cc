#include "format/copied_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "format/regular_file.h"

namespace edgemt {

CopiedFile::~CopiedFile() { reset(); }

CopiedFile::CopiedFile(CopiedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), capacity_(other.capacity_) {
  other.data_ = nullptr;
  other.size_ = other.capacity_ = 0;
}

CopiedFile& CopiedFile::operator=(CopiedFile&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    size_ = other.size_;
    capacity_ = other.capacity_;
    other.data_ = nullptr;
    other.size_ = other.capacity_ = 0;
  }
  return *this;
}

void CopiedFile::reset() {
  if (data_ != nullptr) ::munmap(data_, capacity_);
  data_ = nullptr;
  size_ = capacity_ = 0;
}

Status CopiedFile::read(const char* path, CopiedFile* out) {
  if (path == nullptr || out == nullptr) {
    return Status::error(StatusCode::kInvalidArgument, "CopiedFile::read: null argument");
  }
  out->reset();
  RegularFile file;
  EDGEMT_RETURN_IF_ERROR(RegularFile::open(path, &file));
  const size_t size = file.size();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t capacity = (size + page - 1) / page * page;
  // An anonymous mapping: page aligned (the format needs 64), and returned
  // to the system whole when the model is freed.
  void* memory = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    return Status::error(StatusCode::kOutOfMemory, "cannot allocate %zu bytes to copy model file '%s'",
                         capacity, path);
  }
  out->data_ = static_cast<uint8_t*>(memory);
  out->capacity_ = capacity;

  size_t done = 0;
  while (done < size) {
    const ssize_t got = ::read(file.descriptor(), out->data_ + done, size - done);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got < 0) {
      const int error = errno;
      out->reset();
      return Status::error(StatusCode::kIoError, "cannot read model file '%s': %s", path,
                           std::strerror(error));
    }
    if (got == 0) {
      out->reset();
      return Status::error(StatusCode::kIoError, "model file '%s' shrank while it was read", path);
    }
    done += static_cast<size_t>(got);
  }
  // One more byte means the file grew while it was read: what was read is
  // not one version of it.
  uint8_t extra = 0;
  ssize_t more = 0;
  do {
    more = ::read(file.descriptor(), &extra, 1);
  } while (more < 0 && errno == EINTR);
  if (more != 0) {
    out->reset();
    return Status::error(StatusCode::kIoError, "model file '%s' changed size while it was read",
                         path);
  }
  (void)::mprotect(out->data_, capacity, PROT_READ);
  out->size_ = size;
  return Status::ok();
}

}  // namespace edgemt
