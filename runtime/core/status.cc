#include "edgemt/status.h"

#include <cstdarg>
#include <cstdio>

namespace edgemt {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid-argument";
    case StatusCode::kOutOfRange: return "out-of-range";
    case StatusCode::kFailedPrecondition: return "failed-precondition";
    case StatusCode::kNotFound: return "not-found";
    case StatusCode::kIoError: return "io-error";
    case StatusCode::kInvalidModel: return "invalid-model";
    case StatusCode::kUnsupportedVersion: return "unsupported-version";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kOutOfMemory: return "out-of-memory";
    case StatusCode::kBackendError: return "backend-error";
    case StatusCode::kNumericError: return "numeric-error";
  }
  return "unknown";
}

Status Status::error(StatusCode code, const char* format, ...) {
  Status status;
  status.code_ = code;
  va_list args;
  va_start(args, format);
  std::vsnprintf(status.message_, kMessageCapacity, format, args);
  va_end(args);
  return status;
}

}  // namespace edgemt
