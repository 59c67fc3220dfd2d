// MappedFile: maps whole files read-only; clear errors for the rest.
#include "format/mapped_file.h"

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "support/model_builder.h"

namespace edgemt {
namespace {

using testing::TempFile;

bool contains(const Status& status, const std::string& text) {
  return std::strstr(status.message(), text.c_str()) != nullptr;
}

TEST_CASE("format/mapped_file: maps the whole file read-only") {
  std::vector<uint8_t> bytes(10000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  TempFile file(bytes, "mapped");
  CHECK(file.ok());
  MappedFile mapped;
  const Status status = MappedFile::open(file.path().c_str(), &mapped);
  CHECK_MESSAGE(status.is_ok(), std::string(status.message()));
  CHECK(mapped.is_mapped());
  CHECK(mapped.size() == bytes.size());
  if (!mapped.is_mapped()) return;
  CHECK(std::memcmp(mapped.data(), bytes.data(), bytes.size()) == 0);
  CHECK(reinterpret_cast<uintptr_t>(mapped.data()) % 64 == 0);  // page aligned

  // Moves transfer the mapping; reset unmaps.
  MappedFile moved(std::move(mapped));
  CHECK_FALSE(mapped.is_mapped());
  CHECK(moved.size() == bytes.size());
  MappedFile assigned;
  assigned = std::move(moved);
  CHECK(assigned.data()[5] == bytes[5]);
  assigned.reset();
  CHECK_FALSE(assigned.is_mapped());
  CHECK(assigned.size() == 0);
}

TEST_CASE("format/mapped_file: a missing file is kNotFound with the path and the reason") {
  MappedFile mapped;
  const Status status = MappedFile::open("/nonexistent/edgemt/model.emt", &mapped);
  CHECK(status.code() == StatusCode::kNotFound);
  CHECK_MESSAGE(contains(status, "cannot open model file '/nonexistent/edgemt/model.emt': "
                                 "No such file or directory"),
                std::string(status.message()));
  CHECK_FALSE(mapped.is_mapped());
}

TEST_CASE("format/mapped_file: an empty file is kInvalidModel") {
  TempFile file({}, "empty");
  MappedFile mapped;
  const Status status = MappedFile::open(file.path().c_str(), &mapped);
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK_MESSAGE(contains(status, "is empty"), std::string(status.message()));
  CHECK_MESSAGE(contains(status, file.path()), std::string(status.message()));
}

TEST_CASE("format/mapped_file: a directory is kIoError") {
  MappedFile mapped;
  const Status status = MappedFile::open("/", &mapped);
  CHECK(status.code() == StatusCode::kIoError);
  CHECK_MESSAGE(contains(status, "is a directory, not a regular file"), std::string(status.message()));
}

TEST_CASE("format/mapped_file: an unreadable file is kIoError with strerror") {
  TempFile file({1, 2, 3}, "unreadable");
  CHECK(::chmod(file.path().c_str(), 0) == 0);
  MappedFile mapped;
  const Status status = MappedFile::open(file.path().c_str(), &mapped);
  if (status.is_ok()) {
    MESSAGE("running as root: permissions are not enforced, nothing to check");
    return;
  }
  CHECK(status.code() == StatusCode::kIoError);
  CHECK_MESSAGE(contains(status, "Permission denied"), std::string(status.message()));
}

}  // namespace
}  // namespace edgemt
