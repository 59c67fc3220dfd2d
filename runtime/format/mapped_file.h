// MappedFile: a whole file mapped read-only into memory (POSIX mmap), RAII.
//
// The model loader maps the .emt file so that weights are read in place: no
// copy, and pages the process never touches are never read from disk.
//
// Ownership and lifetime: a MappedFile owns its mapping and unmaps it on
// destruction; it is move-only. data() stays valid (and unchanged: the
// mapping is private and read-only) until the MappedFile is destroyed or
// reset. Concurrent reads from any number of threads are fine.
//
// Like every mapping, it assumes nobody truncates the file while it is mapped:
// the kernel then removes the pages past the new end from every mapping,
// private ones included, and reading them raises SIGBUS. Model files are
// replaced atomically by the tools (a new file renamed over the old one),
// which keeps the old inode, and so every existing mapping, intact. For files
// you do not control, read a private copy instead (CopiedFile,
// Model::LoadMode::kCopy).
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/status.h"

namespace edgemt {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Maps the file at `path`, replacing whatever *out held.
  // Errors: those of RegularFile::open (kNotFound, kIoError for anything but
  // a regular file, kInvalidModel when empty), kIoError when mmap fails.
  [[nodiscard]] static Status open(const char* path, MappedFile* out);

  const uint8_t* data() const { return data_; }  // page aligned; nullptr when empty
  size_t size() const { return size_; }
  bool is_mapped() const { return data_ != nullptr; }

  // Unmaps now (the destructor does the same).
  void reset();

  // Drops the resident pages wholly inside [data, data + size) from memory
  // (madvise MADV_DONTNEED). The mapping stays valid: a later read faults the
  // bytes back in from the file. Used for weights XNNPACK has packed a copy
  // of, so they are not resident twice. No-op outside the mapping.
  void release_pages(const void* data, size_t size) const;

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace edgemt
