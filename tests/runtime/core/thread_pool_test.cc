// ThreadPool: every chunk of every job runs exactly once and only while its
// job runs; slots are below threads() and never used by two threads at
// once; a pool whose workers get no CPU still finishes every job (the caller
// does the work); destruction while idle joins; idle workers sleep.
#include "core/thread_pool.h"

#include <doctest/doctest.h>

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "support/thread_pool.h"

namespace edgemt {
namespace {

using testing::Pool;

// One job's record: what each chunk saw.
struct Job {
  uint64_t id = 0;
  const std::atomic<uint64_t>* current = nullptr;  // the job run() is running
  std::vector<std::atomic<int>> times;
  std::vector<std::atomic<int>>* busy = nullptr;  // per slot: chunks running now
  size_t slots = 0;
  std::atomic<bool> wrong_job{false}, slot_out_of_range{false}, slot_shared{false};
  std::atomic<size_t> on_caller{0};

  explicit Job(size_t chunks) : times(chunks) {}

  static void task(void* context, size_t chunk, size_t slot) {
    Job& job = *static_cast<Job*>(context);
    if (job.current->load() != job.id) job.wrong_job.store(true);
    if (slot >= job.slots) {
      job.slot_out_of_range.store(true);
      return;
    }
    if ((*job.busy)[slot].fetch_add(1) != 0) job.slot_shared.store(true);
    job.times[chunk].fetch_add(1);
    if (slot == 0) job.on_caller.fetch_add(1);
    (*job.busy)[slot].fetch_sub(1);
  }
};

// Runs `jobs` jobs of random sizes in [0, max_chunks] on `pool`; checks each.
void run_random_jobs(ThreadPool& pool, size_t jobs, size_t max_chunks, uint32_t seed,
                     size_t* caller_chunks = nullptr, size_t* all_chunks = nullptr) {
  std::mt19937 rng(seed);
  std::vector<std::atomic<int>> busy(pool.threads());
  std::atomic<uint64_t> current{0};
  bool ok = true;
  for (size_t j = 0; j < jobs; ++j) {
    const size_t chunks = rng() % (max_chunks + 1);
    Job job(chunks);
    job.id = j + 1;
    job.current = &current;
    job.busy = &busy;
    job.slots = pool.threads();
    current.store(job.id);
    pool.run(chunks, &Job::task, &job);
    current.store(0);  // a chunk running after run() returned sees this
    bool once = true;
    for (size_t c = 0; c < chunks; ++c) once &= job.times[c].load() == 1;
    const bool good = once && !job.wrong_job.load() && !job.slot_out_of_range.load() &&
                      !job.slot_shared.load();
    if (!good) {
      CAPTURE(j);
      CAPTURE(chunks);
      CHECK(once);
      CHECK_FALSE(job.wrong_job.load());
      CHECK_FALSE(job.slot_out_of_range.load());
      CHECK_FALSE(job.slot_shared.load());
      ok = false;
      break;
    }
    if (caller_chunks != nullptr) *caller_chunks += job.on_caller.load();
    if (all_chunks != nullptr) *all_chunks += chunks;
  }
  CHECK(ok);
}

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

TEST_CASE("core/thread_pool: create checks the thread count") {
  Pool pool;
  CHECK(ThreadPool::create(0, &pool).code() == StatusCode::kInvalidArgument);
  CHECK(ThreadPool::create(257, &pool).code() == StatusCode::kInvalidArgument);
  CHECK(pool == nullptr);
  REQUIRE(ThreadPool::create(1, &pool).is_ok());
  CHECK(pool->threads() == 1);
}

TEST_CASE("core/thread_pool: many jobs of random sizes run every chunk once, slots < threads, never shared") {
  for (size_t threads : {size_t{1}, size_t{2}, size_t{3}, size_t{8}}) {
    CAPTURE(threads);
    Pool pool = testing::make_pool(threads);
    REQUIRE(pool != nullptr);
    CHECK(pool->threads() == threads);
    run_random_jobs(*pool, 2000, 40, static_cast<uint32_t>(threads));
    run_random_jobs(*pool, 50, 3000, static_cast<uint32_t>(threads) + 100);
  }
}

TEST_CASE("core/thread_pool: jobs spaced past the spin time wake sleeping workers") {
  Pool pool = testing::make_pool(3);
  REQUIRE(pool != nullptr);
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(i % 2 == 0 ? 200 : 5));
    run_random_jobs(*pool, 3, 64, static_cast<uint32_t>(i));
  }
}

// A job of chunks that each wait until a worker (slot != 0) has run one, or
// until a deadline: the chunks on the caller hold the job open so that a
// worker that is awake (or wakes) takes part.
struct WaitForWorker {
  std::atomic<bool> worker_ran{false};
  std::chrono::steady_clock::time_point deadline;

  static void task(void* context, size_t, size_t slot) {
    WaitForWorker& w = *static_cast<WaitForWorker*>(context);
    if (slot != 0) {
      w.worker_ran.store(true);
      return;
    }
    while (!w.worker_ran.load() && std::chrono::steady_clock::now() < w.deadline) {
    }
  }
};

// Whether a small job (estimated below kWakeNanoseconds), run after the
// workers had 20 ms to fall asleep and after wake_for(burst) (0: none), ran
// on the caller alone. A worker the scheduler kept off the CPU may still be
// spinning after 20 ms of a busy machine's wall time and then rightly takes
// part, so a few tries: any one with the worker asleep shows that the job
// did not wake it (a pool that woke sleepers for small jobs fails them all).
bool small_job_stays_on_caller(ThreadPool& pool, size_t burst) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // workers asleep
    if (burst != 0) pool.wake_for(burst);
    WaitForWorker job;
    job.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
    pool.run(8, &WaitForWorker::task, &job, 1000);
    if (!job.worker_ran.load()) return true;
  }
  return false;
}

TEST_CASE("core/thread_pool: wake_for wakes sleeping workers for the small jobs of a burst") {
  Pool pool = testing::make_pool(2);
  REQUIRE(pool != nullptr);
  // A job estimated below kWakeNanoseconds leaves a sleeping worker asleep;
  // after wake_for() of a burst worth a wake the same job gets the worker.
  // (The deadlines bound the test; a worker normally wakes in well under 1 ms.
  // A worker the scheduler wakes on the caller's CPU goes back to sleep by
  // design, so on a busy machine it may take a few tries.)
  CHECK(small_job_stays_on_caller(*pool, 0));
  bool woken = false;
  for (int attempt = 0; attempt < 10 && !woken; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pool->wake_for(ThreadPool::kWakeNanoseconds);
    WaitForWorker job;
    job.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    pool->run(8, &WaitForWorker::task, &job, 1000);
    woken = job.worker_ran.load();
  }
  CHECK(woken);
  // A burst too small for a wake wakes nobody; jobs still run every chunk.
  CHECK(small_job_stays_on_caller(*pool, ThreadPool::kWakeNanoseconds - 1));
  run_random_jobs(*pool, 200, 40, 7);
}

TEST_CASE("core/thread_pool: a pool whose workers get no CPU still finishes every job") {
  // Every thread of this test is pinned to one CPU and the workers are made
  // SCHED_IDLE there: they run only when the caller does not want the CPU,
  // i.e. (almost) never. run() must not wait for them to show up.
  cpu_set_t old_mask;
  CPU_ZERO(&old_mask);
  REQUIRE(sched_getaffinity(0, sizeof(old_mask), &old_mask) == 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &old_mask)) ++cpu;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);  // this (the caller) thread

  Pool pool = testing::make_pool(4);
  REQUIRE(pool != nullptr);
  // Each worker demotes itself the first time it runs a chunk; chunks take
  // a millisecond so that every worker gets to claim one.
  struct Demote {
    std::atomic<int> demoted[4];
    cpu_set_t mask;
  } demote{{{0}, {0}, {0}, {0}}, one};
  bool all_demoted = false;
  for (int attempt = 0; attempt < 200 && !all_demoted; ++attempt) {
    pool->run(
        8,
        [](void* context, size_t, size_t slot) {
          Demote& d = *static_cast<Demote*>(context);
          if (slot != 0 && d.demoted[slot].load() == 0) {
            (void)sched_setaffinity(0, sizeof(d.mask), &d.mask);
            sched_param param{};
            (void)sched_setscheduler(0, SCHED_IDLE, &param);
            d.demoted[slot].store(1);
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        },
        &demote);
    all_demoted = demote.demoted[1].load() && demote.demoted[2].load() && demote.demoted[3].load();
  }
  CHECK(all_demoted);

  size_t caller_chunks = 0, all_chunks = 0;
  const auto start = std::chrono::steady_clock::now();
  run_random_jobs(*pool, 3000, 30, 7, &caller_chunks, &all_chunks);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("starved workers: the caller ran " << caller_chunks << " of " << all_chunks
                                              << " chunks in " << seconds << " s");
  CHECK(seconds < 30.0);  // a collapse (waiting a time slice per job) would take far longer
  CHECK(caller_chunks * 2 > all_chunks);
  pool.reset();
  REQUIRE(sched_setaffinity(0, sizeof(old_mask), &old_mask) == 0);
}

TEST_CASE("core/thread_pool: destruction while idle joins the workers") {
  for (int i = 0; i < 20; ++i) {
    Pool pool = testing::make_pool(1 + static_cast<size_t>(i % 4));
    REQUIRE(pool != nullptr);
    if (i % 3 == 1) run_random_jobs(*pool, 5, 16, static_cast<uint32_t>(i));
    if (i % 3 == 2) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // asleep by now
  }  // destroyed at once, mid-spin and asleep
}

TEST_CASE("core/thread_pool: idle workers sleep (process CPU time while idle stays near 0)") {
  Pool pool = testing::make_pool(4);
  REQUIRE(pool != nullptr);
  run_random_jobs(*pool, 100, 16, 3);
  // Past the spin (ThreadPool::kSpinMicroseconds): everything sleeps.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double before = process_cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double idle_ms = process_cpu_ms() - before;
  MESSAGE("process CPU over 200 ms idle with 3 workers: " << idle_ms << " ms");
  // Three spinning workers would burn up to 600 ms; sleeping ones ~0.
  CHECK(idle_ms < 20.0);
}

}  // namespace
}  // namespace edgemt

namespace edgemt {

TEST_CASE("core/thread_pool: a worker that stalls holding a chunk sends the pool into a back-off") {
  std::unique_ptr<ThreadPool> pool;
  REQUIRE(ThreadPool::create(2, &pool).is_ok());
  // Chunks run by the worker take 3 ms (as if it lost its CPU meanwhile);
  // the caller's take 20 µs: the caller's wait is far past 4 chunks' time.
  struct Context {
    std::atomic<size_t> worker_chunks{0};
    std::atomic<size_t> caller_chunks{0};
  } context;
  auto task = [](void* opaque, size_t, size_t slot) {
    auto& c = *static_cast<Context*>(opaque);
    const auto until = std::chrono::steady_clock::now() +
                       (slot == 0 ? std::chrono::microseconds(20) : std::chrono::microseconds(3000));
    while (std::chrono::steady_clock::now() < until) {
    }
    (slot == 0 ? c.caller_chunks : c.worker_chunks).fetch_add(1);
  };
  for (int attempt = 0; attempt < 200 && pool->stalls() == 0; ++attempt) {
    pool->run(64, task, &context);  // estimate 0: sleeping workers are woken
  }
  REQUIRE(pool->stalls() == 1);
  // Right after the stall every job runs on the caller alone.
  const size_t worker_before = context.worker_chunks.load();
  pool->run(64, task, &context);
  CHECK(context.worker_chunks.load() == worker_before);
  CHECK(pool->stalls() == 1);
}

}  // namespace edgemt
