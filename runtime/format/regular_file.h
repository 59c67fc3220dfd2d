// RegularFile: an open, read-only descriptor of a regular, non-empty file,
// the one way the runtime opens a model file (MappedFile, CopiedFile).
//
// Anything that is not a regular file is refused before a byte is read:
// open() itself uses O_NONBLOCK, because opening a FIFO for reading blocks
// until a writer appears (a model path pointing at a FIFO hung the process),
// and a character device or directory would give nonsense sizes or reads.
//
// Ownership: a RegularFile owns its descriptor (closed on destruction, and
// at exec: O_CLOEXEC); move-only. Not thread-safe to share while reading.
#pragma once

#include <cstddef>

#include "edgemt/status.h"

namespace edgemt {

class RegularFile {
 public:
  RegularFile() = default;
  ~RegularFile();
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  // Opens `path` for reading. Errors (messages name the path):
  //   kNotFound      the file does not exist
  //   kIoError       open or fstat failed (strerror), or `path` is not a
  //                  regular file (FIFO, socket, device, directory)
  //   kInvalidModel  the file is empty
  [[nodiscard]] static Status open(const char* path, RegularFile* out);

  int descriptor() const { return fd_; }
  size_t size() const { return size_; }  // at open time
  void close();

 private:
  int fd_ = -1;
  size_t size_ = 0;
};

}  // namespace edgemt
