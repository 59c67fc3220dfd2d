// Checks the families' config verifiers share (models/<family>/config.cc).
#pragma once

#include <cstdint>

#include "edgemt/status.h"

namespace edgemt {

// kInvalidModel "config.<field> = <value> is out of range (1 to <max>)"
// unless 1 <= value <= max.
[[nodiscard]] inline Status check_config_range(const char* field, uint32_t value, uint32_t max) {
  if (value == 0 || value > max) {
    return Status::error(StatusCode::kInvalidModel, "config.%s = %u is out of range (1 to %u)",
                         field, value, max);
  }
  return Status::ok();
}

}  // namespace edgemt
