// parallel_for: runs f(item, slot) for item in [0, count) on the run phase's
// ThreadPool (core/thread_pool.h).
//
// The range is cut into contiguous chunks (a few per thread) that the
// calling thread and the pool's workers claim as they get to them; `slot`
// is the claiming thread's stable index in [0, Parallel::workers), for
// per-thread scratch. Each item's result depends only on the item, never on
// the slot, the chunking or the thread count, so output is identical for
// any number of threads.
//
// Small work stays on the calling thread. Handing a job to workers that
// are spinning (translate() wakes them for a call worth it:
// ThreadPool::wake_for) costs about 0.2-0.5 µs (publishing it, the claims,
// waiting for the chunks they took; 2 threads, Zen 3 VM,
// edgemt_thread_pool_benchmark): splitting pays from ~1 µs of work. Workers
// that went to sleep are woken only for much larger jobs (a wake costs tens
// of µs; ThreadPool::kWakeNanoseconds). At batch 1 most decoder calls are
// a few µs (4 heads of one query; an int8 [1, 256] x [256, 768] product
// takes ~3 µs), so the threshold decides whether a second thread helps
// there at all: at 8 µs it kept nearly every int8 call on the caller. Callers
// pass an estimate of the work per item in nanoseconds (from the kernels'
// measured rates, noted at each call); only an estimated total of
// Parallel::min_nanoseconds (default kMinParallelNanoseconds,
// TranslatorOptions::min_parallel_nanoseconds) or more is split. Where the
// work runs never changes the result.
#pragma once

#include <cstddef>

#include "core/thread_pool.h"

namespace edgemt {

constexpr size_t kMinParallelNanoseconds = 2000;

// Chunks per thread parallel_for cuts a range into: more than one, so a
// thread that loses its CPU to another process holds back only a small
// part of the work (the others claim the rest).
constexpr size_t kChunksPerThread = 4;

// A large job is cut finer, into chunks of at most about this much
// estimated work, so that its threads finish together: at the end one
// thread waits for the chunk the other claimed last. At batch 32 × beam 4
// the OPUS-MT-base output projection (~100 ms on one thread) was 8 chunks of
// ~13 ms; in 60 (~2 ms each), the caller's wait in ThreadPool::run went
// from 2.5-3.2% to 1.2-1.6% of the 2-thread decode's samples (perf, Zen 3
// VM). Not finer: a wait longer than 4 chunks counts as a stall
// (ThreadPool::stall_nanoseconds), and a VM's brief preemptions must not.
// Results never depend on the chunking.
constexpr size_t kLongestChunkNanoseconds = 4000000;

// The run phase's threads: a pool (nullptr: the calling thread only), the
// scratch slots tasks may use (the pool's threads) and the smallest work
// worth a dispatch. Implicitly made from a bare pool (default threshold),
// as layer tests have one.
struct Parallel {
  ThreadPool* pool = nullptr;
  size_t workers = 1;
  size_t min_nanoseconds = kMinParallelNanoseconds;

  Parallel() = default;
  Parallel(ThreadPool* thread_pool)  // NOLINT(google-explicit-constructor): see above
      : pool(thread_pool), workers(thread_pool ? thread_pool->threads() : 1) {}
  Parallel(ThreadPool* thread_pool, size_t min_ns)
      : pool(thread_pool), workers(thread_pool ? thread_pool->threads() : 1), min_nanoseconds(min_ns) {}

  // True when work estimated at `nanoseconds` is worth a dispatch.
  bool worth(size_t nanoseconds) const {
    return pool != nullptr && pool->threads() > 1 && nanoseconds >= min_nanoseconds;
  }
};

// Cuts [0, count) into `chunks_per_thread` chunks per thread, or one per
// kLongestChunkNanoseconds of `nanoseconds` when that is more (at most
// `count`), and runs f(chunk_begin, chunk_end, slot) for each on
// parallel.pool (callers have checked parallel.worth() of `nanoseconds`,
// the whole job's estimate).
template <typename F>
void parallel_ranges(const Parallel& parallel, size_t count, size_t chunks_per_thread,
                     size_t nanoseconds, F& f) {
  size_t chunks = parallel.pool->threads() * chunks_per_thread;
  if (nanoseconds / kLongestChunkNanoseconds > chunks) chunks = nanoseconds / kLongestChunkNanoseconds;
  if (chunks > count) chunks = count;
  if (chunks > ThreadPool::kMaxChunks) chunks = ThreadPool::kMaxChunks;
  struct Context {
    F* f;
    size_t count;
    size_t chunks;
  } context{&f, count, chunks};
  parallel.pool->run(
      chunks,
      [](void* opaque, size_t chunk, size_t slot) {
        const Context& c = *static_cast<const Context*>(opaque);
        (*c.f)(chunk * c.count / c.chunks, (chunk + 1) * c.count / c.chunks, slot);
      },
      &context, nanoseconds);
}

template <typename F>
void parallel_for(const Parallel& parallel, size_t count, size_t nanoseconds_per_item, F& f) {
  if (count == 0) return;
  if (count == 1 || !parallel.worth(count * nanoseconds_per_item)) {
    for (size_t i = 0; i < count; ++i) f(i, size_t{0});
    return;
  }
  auto range = [&f](size_t begin, size_t end, size_t slot) {
    for (size_t i = begin; i < end; ++i) f(i, slot);
  };
  parallel_ranges(parallel, count, kChunksPerThread, count * nanoseconds_per_item, range);
}

// Runs kernel(first_block, block_count) over the column blocks [0, blocks)
// of a GEMM: on the calling thread when the job is small (at most
// `per_task` blocks, or not worth a dispatch at `nanoseconds`), else over
// parallel.pool in tasks of whole groups of `per_task` blocks (a kernel's
// widest tile). Blocks are independent, so the result is the same bits for
// any thread count.
template <typename F>
void run_column_blocks(const Parallel& parallel, size_t blocks, size_t per_task,
                       size_t nanoseconds, F& kernel) {
  if (blocks <= per_task || !parallel.worth(nanoseconds)) {
    kernel(size_t{0}, blocks);
    return;
  }
  auto task = [&](size_t first_task, size_t end_task, size_t) {
    const size_t first = first_task * per_task;
    const size_t end = end_task * per_task < blocks ? end_task * per_task : blocks;
    kernel(first, end - first);
  };
  parallel_ranges(parallel, (blocks + per_task - 1) / per_task, kChunksPerThread, nanoseconds,
                  task);
}

}  // namespace edgemt
