// CopiedFile: a whole file read into private, page-aligned memory, RAII.
//
// The alternative to MappedFile for model files the process does not control
// (Model::LoadMode::kCopy): once read, nothing another process does to the
// file (truncating it, rewriting it in place) can reach the copy, whereas a
// mapping turns a truncation into SIGBUS. The price is the file's size in
// resident memory for as long as the copy lives; a mapping only holds the
// pages that are read, and can drop the pages of weights a Translator packed.
//
// Ownership and lifetime: a CopiedFile owns its memory (an anonymous
// mapping, read-only once filled) and frees it on destruction; move-only.
// data() is valid until the CopiedFile is destroyed or reset. Concurrent
// reads from any number of threads are fine.
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/status.h"

namespace edgemt {

class CopiedFile {
 public:
  CopiedFile() = default;
  ~CopiedFile();
  CopiedFile(CopiedFile&& other) noexcept;
  CopiedFile& operator=(CopiedFile&& other) noexcept;
  CopiedFile(const CopiedFile&) = delete;
  CopiedFile& operator=(const CopiedFile&) = delete;

  // Reads the file at `path`, replacing whatever *out held.
  // Errors: those of RegularFile::open (kNotFound, kIoError for anything but
  // a regular file, kInvalidModel when empty); kOutOfMemory; kIoError when a
  // read fails or the file's size changes while it is read.
  [[nodiscard]] static Status read(const char* path, CopiedFile* out);

  const uint8_t* data() const { return data_; }  // page aligned; nullptr when empty
  size_t size() const { return size_; }
  bool is_loaded() const { return data_ != nullptr; }
  void reset();

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;  // bytes mapped (size rounded up to pages)
};

}  // namespace edgemt
