// CopiedFile: a private copy of a whole file, immune to what happens to the
// file afterwards.
#include "format/copied_file.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "support/model_builder.h"

namespace edgemt {
namespace {

using testing::TempFile;

std::vector<uint8_t> pattern(size_t size) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 13 + 5);
  return bytes;
}

TEST_CASE("format/copied_file: reads the whole file into page-aligned memory") {
  for (size_t size : {size_t{1}, size_t{4095}, size_t{4096}, size_t{100000}}) {
    const std::vector<uint8_t> bytes = pattern(size);
    TempFile file(bytes, "copied");
    CopiedFile copy;
    const Status status = CopiedFile::read(file.path().c_str(), &copy);
    CAPTURE(size);
    REQUIRE_MESSAGE(status.is_ok(), std::string(status.message()));
    CHECK(copy.size() == size);
    CHECK(reinterpret_cast<uintptr_t>(copy.data()) % 4096 == 0);
    CHECK(std::memcmp(copy.data(), bytes.data(), size) == 0);
    CopiedFile moved(std::move(copy));
    CHECK_FALSE(copy.is_loaded());
    CHECK(moved.size() == size);
  }
}

TEST_CASE("format/copied_file: the copy survives truncating and rewriting the file") {
  const std::vector<uint8_t> bytes = pattern(50000);
  TempFile file(bytes, "copied");
  CopiedFile copy;
  REQUIRE(CopiedFile::read(file.path().c_str(), &copy).is_ok());
  REQUIRE(::truncate(file.path().c_str(), 0) == 0);  // a mapping would SIGBUS now
  CHECK(std::memcmp(copy.data(), bytes.data(), bytes.size()) == 0);
}

TEST_CASE("format/copied_file: what RegularFile refuses is refused") {
  CopiedFile copy;
  CHECK(CopiedFile::read("/", &copy).code() == StatusCode::kIoError);
  CHECK(CopiedFile::read("/dev/zero", &copy).code() == StatusCode::kIoError);
  CHECK(CopiedFile::read("/nonexistent/edgemt/model.emt", &copy).code() == StatusCode::kNotFound);
  CHECK_FALSE(copy.is_loaded());
}

}  // namespace
}  // namespace edgemt
