// A pthreadpool owned by a unique_ptr, for tests that run kernels threaded.
#pragma once

#include <pthreadpool.h>

#include <memory>

namespace edgemt::testing {

struct PoolDeleter {
  void operator()(pthreadpool* pool) const { pthreadpool_destroy(pool); }
};
using Pool = std::unique_ptr<pthreadpool, PoolDeleter>;

}  // namespace edgemt::testing
