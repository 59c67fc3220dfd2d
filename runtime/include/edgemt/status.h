// Status: the error type of the edgemt runtime.
//
// The runtime core never throws and never allocates after load, so errors are
// values: a code for programs and a readable message for people. The message
// lives inside the Status (fixed buffer, no heap), so a Status can be created
// on the run path. Every function that can fail returns a [[nodiscard]]
// Status; ignoring one is a compile warning (an error in CI).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {

enum class StatusCode : uint8_t {
  kOk = 0,
  // Caller errors.
  kInvalidArgument,     // bad option or input (oversize batch, id outside vocab, ...)
  kOutOfRange,          // input longer than the model or the prepared limits allow
  kFailedPrecondition,  // API misuse: e.g. translate before prepare
  // Model file errors (reported once, at load).
  kNotFound,            // file missing
  kIoError,             // open/stat/mmap failed
  kInvalidModel,        // truncated, corrupt, wrong identifier, inconsistent shapes
  kUnsupportedVersion,  // format version this runtime does not read
  kUnsupported,         // feature (dtype, family, activation) this build cannot run
  // Environment errors.
  kOutOfMemory,         // buffer too small or allocation at load failed
  kBackendError,        // XNNPACK failed, or a worker thread did not start
  // Per-sentence result errors (Translation::status).
  kNumericError,        // the model computed NaN or infinite scores for a sentence
};

// Short stable name of a code ("invalid-model", ...), for logs and tests.
const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  static constexpr size_t kMessageCapacity = 240;

  Status() : code_(StatusCode::kOk) { message_[0] = '\0'; }
  static Status ok() { return Status(); }
  // printf-style message; truncated to kMessageCapacity - 1 characters.
  static Status error(StatusCode code, const char* format, ...)
      __attribute__((format(printf, 2, 3)));

  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const char* message() const { return message_; }

 private:
  StatusCode code_;
  char message_[kMessageCapacity];
};

}  // namespace edgemt

// Returns from the enclosing function if `expr` (a Status) is not ok.
#define EDGEMT_RETURN_IF_ERROR(expr)                      \
  do {                                                    \
    ::edgemt::Status edgemt_status_ = (expr);             \
    if (!edgemt_status_.is_ok()) return edgemt_status_;   \
  } while (0)
