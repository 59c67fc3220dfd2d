// Status: ok/error values, printf-style messages kept inside the object and
// cut at kMessageCapacity - 1 characters, a distinct stable name per code,
// and EDGEMT_RETURN_IF_ERROR.
#include "edgemt/status.h"

#include <doctest/doctest.h>

#include <cstring>
#include <set>
#include <string>

namespace edgemt {
namespace {

constexpr StatusCode kAllCodes[] = {
    StatusCode::kOk,           StatusCode::kInvalidArgument,    StatusCode::kOutOfRange,
    StatusCode::kFailedPrecondition, StatusCode::kNotFound,     StatusCode::kIoError,
    StatusCode::kInvalidModel, StatusCode::kUnsupportedVersion, StatusCode::kUnsupported,
    StatusCode::kOutOfMemory,  StatusCode::kBackendError,       StatusCode::kNumericError,
};

TEST_CASE("core/status: default and ok() are ok with an empty message") {
  const Status a;
  const Status b = Status::ok();
  CHECK(a.is_ok());
  CHECK(b.is_ok());
  CHECK(a.code() == StatusCode::kOk);
  CHECK(b.code() == StatusCode::kOk);
  CHECK(std::string(a.message()).empty());
  CHECK(std::string(b.message()).empty());
}

TEST_CASE("core/status: error keeps the code and formats the message") {
  const Status s = Status::error(StatusCode::kInvalidModel, "tensor %s has %d dims (%zu bytes) %.2f",
                                 "output.weight", 3, size_t{12345}, 0.5);
  CHECK_FALSE(s.is_ok());
  CHECK(s.code() == StatusCode::kInvalidModel);
  CHECK(std::string(s.message()) == "tensor output.weight has 3 dims (12345 bytes) 0.50");

  // A code other than kOk is never ok, even with an empty message.
  for (StatusCode code : kAllCodes) {
    if (code == StatusCode::kOk) continue;
    CAPTURE(status_code_name(code));
    const Status e = Status::error(code, "%s", "");
    CHECK_FALSE(e.is_ok());
    CHECK(e.code() == code);
  }
}

TEST_CASE("core/status: messages are cut at kMessageCapacity - 1 characters") {
  constexpr size_t kMax = Status::kMessageCapacity - 1;
  std::string text;
  for (size_t i = 0; i < 3 * Status::kMessageCapacity; ++i) {
    text.push_back(static_cast<char>('a' + i % 26));
  }
  for (size_t length : {kMax - 1, kMax, kMax + 1, 3 * Status::kMessageCapacity}) {
    CAPTURE(length);
    const std::string input = text.substr(0, length);
    const Status s = Status::error(StatusCode::kIoError, "%s", input.c_str());
    const std::string message = s.message();
    const size_t kept = length < kMax ? length : kMax;
    CHECK(message.size() == kept);
    CHECK(message == input.substr(0, kept));
  }
  // Formatting that expands past the end is cut too.
  const Status s = Status::error(StatusCode::kIoError, "%0500d", 7);
  CHECK(std::strlen(s.message()) == kMax);
  CHECK(s.message()[0] == '0');
}

TEST_CASE("core/status: a copied status keeps its own message") {
  Status copy;
  {
    const std::string text = "temporary text";
    const Status original = Status::error(StatusCode::kNotFound, "%s", text.c_str());
    copy = original;
  }
  CHECK(copy.code() == StatusCode::kNotFound);
  CHECK(std::string(copy.message()) == "temporary text");
}

TEST_CASE("core/status: every code has a distinct non-empty name") {
  std::set<std::string> names;
  for (StatusCode code : kAllCodes) {
    const char* name = status_code_name(code);
    REQUIRE(name != nullptr);
    CAPTURE(std::string(name));
    CHECK(std::strlen(name) > 0);
    CHECK(std::string(name) != "unknown");
    names.insert(name);
  }
  CHECK(names.size() == sizeof(kAllCodes) / sizeof(kAllCodes[0]));
  // Names other tools and tests rely on.
  CHECK(std::string(status_code_name(StatusCode::kOk)) == "ok");
  CHECK(std::string(status_code_name(StatusCode::kInvalidArgument)) == "invalid-argument");
  CHECK(std::string(status_code_name(StatusCode::kInvalidModel)) == "invalid-model");
  CHECK(std::string(status_code_name(StatusCode::kBackendError)) == "backend-error");
  CHECK(std::string(status_code_name(StatusCode::kNumericError)) == "numeric-error");
  CHECK(std::string(status_code_name(static_cast<StatusCode>(200))) == "unknown");
}

int g_evaluations = 0;
int g_reached_end = 0;

Status counted(StatusCode code) {
  ++g_evaluations;
  if (code == StatusCode::kOk) return Status::ok();
  return Status::error(code, "failed with %d", static_cast<int>(code));
}

Status two_steps(StatusCode first, StatusCode second) {
  EDGEMT_RETURN_IF_ERROR(counted(first));
  EDGEMT_RETURN_IF_ERROR(counted(second));
  ++g_reached_end;
  return Status::error(StatusCode::kOutOfMemory, "end");
}

TEST_CASE("core/status: EDGEMT_RETURN_IF_ERROR returns the first error and evaluates once") {
  g_evaluations = 0;
  g_reached_end = 0;
  const Status a = two_steps(StatusCode::kNotFound, StatusCode::kOk);
  CHECK(a.code() == StatusCode::kNotFound);
  CHECK(std::string(a.message()) == "failed with 4");
  CHECK(g_evaluations == 1);
  CHECK(g_reached_end == 0);

  g_evaluations = 0;
  const Status b = two_steps(StatusCode::kOk, StatusCode::kUnsupported);
  CHECK(b.code() == StatusCode::kUnsupported);
  CHECK(g_evaluations == 2);
  CHECK(g_reached_end == 0);

  g_evaluations = 0;
  const Status c = two_steps(StatusCode::kOk, StatusCode::kOk);
  CHECK(c.code() == StatusCode::kOutOfMemory);
  CHECK(std::string(c.message()) == "end");
  CHECK(g_evaluations == 2);
  CHECK(g_reached_end == 1);
}

}  // namespace
}  // namespace edgemt
