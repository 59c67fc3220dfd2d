// Process-wide XNNPACK initialization with a counting allocator.
//
// XNNPACK allocates only when operators are created (load phase); setup and
// run never do. Every allocation it makes goes through the xnn_allocator
// installed here, which counts calls, so tests can prove that the run phase
// makes none.
#pragma once

#include <cstdint>

#include "edgemt/status.h"

namespace edgemt {

// Idempotent and thread-safe. Errors: kBackendError (e.g. unsupported CPU).
[[nodiscard]] Status ensure_xnnpack_initialized();

// Number of allocate/reallocate/aligned_allocate calls XNNPACK has made
// through our allocator since process start.
uint64_t xnnpack_allocation_count();

}  // namespace edgemt
