// ThreadPool: edgemt's own workers for the run phase.
//
// A job is `chunks` independent pieces of work, task(context, chunk, slot)
// for chunk in [0, chunks). run() hands them out like this:
//
//   caller (slot 0)     worker 1 (slot 1)     worker T-1 (slot T-1)
//        |  publish job g: claim word = (g, next 0, count n)
//        |  wake sleepers (only if any)
//        v                     v                     v
//   claim chunk (CAS) <-- the same claim word, tagged with g --> claim chunk
//   run it                run it                run it
//   ... until next == n; then wait until every CLAIMED chunk is done
//
// Why it cannot collapse when other processes own the cores:
//   * the caller takes part and claims chunks dynamically, so if no worker
//     gets a CPU the caller runs every chunk itself, as one thread would;
//   * the caller never waits for a worker to show up, only for chunks a
//     worker has actually claimed (and is running);
//   * the claim word carries the job's sequence number, so a worker that
//     wakes late cannot claim a chunk of a finished or later job.
// Why it costs nothing idle: a worker spins at most kSpinMicroseconds after
// its last job (pause instruction, then sched_yield) and then sleeps on a
// condition variable; run() takes the mutex to wake only when a worker
// sleeps.
//
//   * a worker descheduled while it holds a chunk makes the caller wait for
//     it; when such a wait is much longer than a chunk takes (kMinStall...),
//     the pool runs every job on the caller alone for a while (5 ms,
//     doubling after each stall in a row up to 200 ms), then tries the
//     workers again.
// Slots: the caller is slot 0 and worker i is slot i, for the pool's life,
// so a task may use per-slot scratch; a slot runs one chunk at a time.
//
// Phases: create() starts the threads (load phase: allocates, may fail);
// run() allocates nothing and cannot fail; the destructor stops and joins
// the workers. Threading: one thread calls run() at a time (the owner: a
// Translator is used by one thread at a time); a task must not call run().
// Synchronization: everything the caller wrote before run() happens-before
// each task, and each task happens-before run() returns (plain std::atomic
// and std::mutex, so ThreadSanitizer sees it without annotations).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "edgemt/status.h"

namespace edgemt {

using ThreadPoolTask = void (*)(void* context, size_t chunk, size_t slot);

class ThreadPool {
 public:
  // Most chunks in one job (the claim word's 16-bit fields).
  static constexpr size_t kMaxChunks = 0xFFFF;
  // How long a worker spins for the next job before it sleeps: longer than
  // the serial gaps between a batch-32 × beam-4 decoder step's parallel
  // parts (search bookkeeping, cache appends), which at 50 µs sent the
  // worker to sleep mid-step; int8 throughput at 2 threads on this VM went
  // from 266-368 sent/s (three runs) to 407-426, while 2 threads stay within
  // 1.2x of 1 under competing load (docs/usage.md, threads).
  static constexpr int64_t kSpinMicroseconds = 200;
  // The smallest job sleeping workers are woken for.
  static constexpr size_t kWakeNanoseconds = 100000;
  // A wait for a worker's chunk longer than this (and than 4 chunks' time)
  // is a stall; then the caller runs alone for a back-off period.
  static constexpr int64_t kMinStallNanoseconds = 300000;
  static constexpr int64_t kMinBackoffNanoseconds = 5000000;
  static constexpr int64_t kMaxBackoffNanoseconds = 200000000;
  // One job in this many that may wake workers tries the other choice.
  static constexpr uint32_t kExploreEvery = 16;

  // Starts threads - 1 workers (threads in [1, 256]). Errors:
  // kInvalidArgument, kOutOfMemory, kBackendError (a thread did not start).
  [[nodiscard]] static Status create(size_t threads, std::unique_ptr<ThreadPool>* out);

  ~ThreadPool();  // stops and joins the workers
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Participants: the calling thread plus the workers; slots are [0, threads()).
  size_t threads() const { return threads_; }
  // Stalls seen so far (waits that sent the pool into a back-off); for
  // tests and reports. Owner thread only.
  size_t stalls() const { return stalls_; }

  // Runs task(context, c, slot) once for every c in [0, chunks) (chunks <=
  // kMaxChunks) and returns when all have finished. The caller runs chunks
  // itself (slot 0). `estimated_nanoseconds` is the job's work on one
  // thread (0: unknown): sleeping workers are woken only for a job of at
  // least kWakeNanoseconds, smaller ones go to the workers still spinning
  // (a wake costs the caller more than it saves there, and under load the
  // woken worker can take the caller's own CPU). No allocation; never fails.
  void run(size_t chunks, ThreadPoolTask task, void* context, size_t estimated_nanoseconds = 0);

  // A hint before a burst of jobs (one translate() call) whose work adds up
  // to `estimated_nanoseconds`: wakes sleeping workers when the burst is
  // worth a wake (>= kWakeNanoseconds, no stall back-off running, waking
  // has not measured slower than going alone), so that they spin for its
  // jobs. Otherwise a burst of jobs each too small to wake a worker (batch-1
  // int8 decoding: 5-60 µs each) would run on the caller alone however long
  // it lasts. The woken workers sleep again kSpinMicroseconds after the
  // burst's last job. Owner thread only; no allocation.
  void wake_for(size_t estimated_nanoseconds);

 private:
  struct Worker;
  explicit ThreadPool(size_t threads);
  static void* worker_main(void* opaque);
  void worker_loop(size_t slot);
  // Claims and runs chunks of job `generation` until none is left; returns
  // how many this thread ran.
  size_t work(uint64_t generation, size_t slot);
  // How long the caller waits for a worker's chunk before calling it a
  // stall, after working `working_ns` running `ran` chunks itself.
  static int64_t stall_nanoseconds(int64_t working_ns, size_t ran);
  // For a job that could wake sleeping workers: wake them, or go alone
  // (with the workers still spinning, if any).
  enum class Choice : uint8_t { kNone, kWake, kAlone };
  Choice choose_wake();
  // `cost`: a job's wall time over its estimated work, after `choice`.
  void learn(Choice choice, double cost);

  const size_t threads_;
  Worker* workers_ = nullptr;  // [threads_ - 1]
  size_t started_ = 0;

  // (generation << 32) | (next chunk << 16) | chunk count.
  std::atomic<uint64_t> claim_{0};
  std::atomic<ThreadPoolTask> task_{nullptr};
  std::atomic<void*> context_{nullptr};
  std::atomic<size_t> done_{0};  // chunks of the current job finished

  // Owner thread only: the stall back-off, and what waking workers has
  // cost lately against going alone (running averages of wall time over
  // estimated work; 0 until measured).
  int64_t solo_until_ns_ = 0;
  int64_t backoff_ns_ = kMinBackoffNanoseconds;
  size_t stalls_ = 0;
  double wake_cost_ = 0.0;
  double alone_cost_ = 0.0;
  uint32_t random_ = 0x9E3779B9u;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<size_t> sleepers_{0};
  std::atomic<int> caller_cpu_{-1};  // where run() last ran (sched_getcpu)
  std::atomic<bool> stop_{false};
};

}  // namespace edgemt
