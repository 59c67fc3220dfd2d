#include "format/mapped_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "format/regular_file.h"

namespace edgemt {

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

  RegularFile file;
  EDGEMT_RETURN_IF_ERROR(RegularFile::open(path, &file));
  const size_t size = file.size();

  void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.descriptor(), 0);
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
