// An edgemt ThreadPool (core/thread_pool.h) for tests that run kernels
// threaded: make_pool(n) gives nullptr if the threads did not start.
#pragma once

#include <cstddef>
#include <memory>

#include "core/thread_pool.h"

namespace edgemt::testing {

using Pool = std::unique_ptr<ThreadPool>;

inline Pool make_pool(size_t threads) {
  Pool pool;
  if (!ThreadPool::create(threads, &pool).is_ok()) return nullptr;
  return pool;
}

}  // namespace edgemt::testing
