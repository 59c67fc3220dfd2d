// parallel_for: runs f(item, worker) for item in [0, count) on a pthreadpool.
//
// pthreadpool 2022 does not tell a task which thread runs it, but kernels
// need per-thread scratch. So the range is cut into one contiguous slice per
// worker slot (static schedule); slot w owns scratch w. Each item's result
// depends only on the item, never on the slot or the thread count, so output
// is identical for any number of threads.
//
// Small work stays on the calling thread. A pthreadpool dispatch costs about
// 2 µs (waking the workers and waiting for them; measured on this project's
// 2-vCPU VM), so splitting W µs of work over two threads saves W/2 - 2 µs: a
// loss below 4 µs. At batch 1 most decoder calls are that small (4 heads of
// one query; an int8 [1, 256] x [256, 768] product takes 2 µs), and before
// this rule int8 batch-1 greedy decoding took 0.123 ms per step on 2 threads
// against 0.073 ms on one. Callers pass an estimate of the work per item in
// nanoseconds (from the kernels' measured rates, noted at each call); only an
// estimated total of Parallel::min_nanoseconds (default
// kMinParallelNanoseconds, TranslatorOptions::min_parallel_nanoseconds) or
// more is split. Where the work runs never changes the result.
#pragma once

#include <pthreadpool.h>

#include <cstddef>

// ThreadSanitizer (the "tsan" preset) cannot see inside Debian's pthreadpool,
// which is not instrumented: the synchronization by which a dispatch
// happens-before each task, and each task before the dispatch returns, is
// invisible to it, and every shared read would be reported as a race. The
// pool_* calls below state those two edges (__tsan_release/__tsan_acquire)
// in TSan builds and are plain pthreadpool calls otherwise.
#if defined(__SANITIZE_THREAD__)
#define EDGEMT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EDGEMT_TSAN 1
#endif
#endif
#ifdef EDGEMT_TSAN
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#endif

namespace edgemt {

#ifdef EDGEMT_TSAN
namespace detail {
template <typename Task>
struct PoolCall {
  Task task;
  void* context;
};
}  // namespace detail

inline void pool_parallelize_1d(pthreadpool_t pool, pthreadpool_task_1d_t task, void* context,
                                size_t range) {
  detail::PoolCall<pthreadpool_task_1d_t> call{task, context};
  __tsan_release(&call);
  pthreadpool_parallelize_1d(
      pool,
      [](void* opaque, size_t i) {
        auto* c = static_cast<detail::PoolCall<pthreadpool_task_1d_t>*>(opaque);
        __tsan_acquire(c);
        c->task(c->context, i);
        __tsan_release(c);
      },
      &call, range, 0);
  __tsan_acquire(&call);
}

inline void pool_parallelize_1d_tile_1d(pthreadpool_t pool, pthreadpool_task_1d_tile_1d_t task,
                                        void* context, size_t range, size_t tile) {
  detail::PoolCall<pthreadpool_task_1d_tile_1d_t> call{task, context};
  __tsan_release(&call);
  pthreadpool_parallelize_1d_tile_1d(
      pool,
      [](void* opaque, size_t first, size_t count) {
        auto* c = static_cast<detail::PoolCall<pthreadpool_task_1d_tile_1d_t>*>(opaque);
        __tsan_acquire(c);
        c->task(c->context, first, count);
        __tsan_release(c);
      },
      &call, range, tile, 0);
  __tsan_acquire(&call);
}
#else
inline void pool_parallelize_1d(pthreadpool_t pool, pthreadpool_task_1d_t task, void* context,
                                size_t range) {
  pthreadpool_parallelize_1d(pool, task, context, range, 0);
}

inline void pool_parallelize_1d_tile_1d(pthreadpool_t pool, pthreadpool_task_1d_tile_1d_t task,
                                        void* context, size_t range, size_t tile) {
  pthreadpool_parallelize_1d_tile_1d(pool, task, context, range, tile, 0);
}
#endif

constexpr size_t kMinParallelNanoseconds = 8000;

// The run phase's threads: a pool (nullptr: the calling thread only), the
// scratch slots parallel_for may hand out, and the smallest work worth a
// dispatch. Implicitly made from a bare pool (one slot per thread, default
// threshold), as layer tests and XNNPACK-only callers have one.
struct Parallel {
  pthreadpool_t pool = nullptr;
  size_t workers = 1;
  size_t min_nanoseconds = kMinParallelNanoseconds;

  Parallel() = default;
  Parallel(pthreadpool_t thread_pool)  // NOLINT(google-explicit-constructor): see above
      : pool(thread_pool), workers(thread_pool ? pthreadpool_get_threads_count(thread_pool) : 1) {}
  Parallel(pthreadpool_t thread_pool, size_t worker_slots, size_t min_ns)
      : pool(thread_pool), workers(worker_slots), min_nanoseconds(min_ns) {}

  // True when work estimated at `nanoseconds` is worth a dispatch.
  bool worth(size_t nanoseconds) const {
    return pool != nullptr && pthreadpool_get_threads_count(pool) > 1 &&
           nanoseconds >= min_nanoseconds;
  }
};

template <typename F>
void parallel_for(const Parallel& parallel, size_t count, size_t nanoseconds_per_item, F& f) {
  if (count == 0) return;
  const size_t workers = parallel.workers < count ? parallel.workers : count;
  if (workers <= 1 || !parallel.worth(count * nanoseconds_per_item)) {
    for (size_t i = 0; i < count; ++i) f(i, size_t{0});
    return;
  }
  struct Context {
    F* f;
    size_t workers;
    size_t count;
  } context{&f, workers, count};
  pool_parallelize_1d(
      parallel.pool,
      [](void* opaque, size_t slot) {
        const Context& c = *static_cast<const Context*>(opaque);
        const size_t begin = slot * c.count / c.workers;
        const size_t end = (slot + 1) * c.count / c.workers;
        for (size_t i = begin; i < end; ++i) (*c.f)(i, slot);
      },
      &context, workers);
}

}  // namespace edgemt
