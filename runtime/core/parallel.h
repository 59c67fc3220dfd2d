// parallel_for: runs f(item, worker) for item in [0, count) on a pthreadpool.
//
// pthreadpool 2022 does not tell a task which thread runs it, but kernels
// need per-thread scratch. So the range is cut into one contiguous slice per
// worker slot (static schedule); slot w owns scratch w. Each item's result
// depends only on the item, never on the slot or the thread count, so output
// is identical for any number of threads.
#pragma once

#include <pthreadpool.h>

#include <cstddef>

namespace edgemt {

template <typename F>
void parallel_for(pthreadpool_t pool, size_t workers, size_t count, F& f) {
  if (count == 0) return;
  if (workers > count) workers = count;
  if (pool == nullptr || workers <= 1) {
    for (size_t i = 0; i < count; ++i) f(i, size_t{0});
    return;
  }
  struct Context {
    F* f;
    size_t workers;
    size_t count;
  } context{&f, workers, count};
  pthreadpool_parallelize_1d(
      pool,
      [](void* opaque, size_t slot) {
        const Context& c = *static_cast<const Context*>(opaque);
        const size_t begin = slot * c.count / c.workers;
        const size_t end = (slot + 1) * c.count / c.workers;
        for (size_t i = begin; i < end; ++i) (*c.f)(i, slot);
      },
      &context, workers, 0);
}

}  // namespace edgemt
