#include "core/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <new>

namespace edgemt {

// The CPU the calling thread runs on, or -1 where the platform cannot say
// (WebAssembly: one thread, no pool ever made there).
static int current_cpu() {
#if defined(__EMSCRIPTEN__)
  return -1;
#else
  return sched_getcpu();
#endif
}

namespace {

// Tells the core this is a spin-wait (x86 PAUSE, Arm YIELD): cheaper for a
// sibling hyperthread and for power than a bare load loop.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr uint64_t generation_of(uint64_t word) { return word >> 32; }
constexpr size_t next_of(uint64_t word) { return static_cast<size_t>((word >> 16) & 0xFFFF); }
constexpr size_t count_of(uint64_t word) { return static_cast<size_t>(word & 0xFFFF); }
constexpr uint64_t kOneChunk = uint64_t{1} << 16;

// Spin iterations between clock reads / yields.
constexpr unsigned kSpinsPerCheck = 64;

}  // namespace

struct ThreadPool::Worker {
  ThreadPool* pool = nullptr;
  size_t slot = 0;
  pthread_t thread{};
};

ThreadPool::ThreadPool(size_t threads) : threads_(threads) {}

Status ThreadPool::create(size_t threads, std::unique_ptr<ThreadPool>* out) {
  if (threads == 0 || threads > 256) {
    return Status::error(StatusCode::kInvalidArgument, "threads must be in [1, 256], got %zu", threads);
  }
  std::unique_ptr<ThreadPool> pool(new (std::nothrow) ThreadPool(threads));
  if (!pool) return Status::error(StatusCode::kOutOfMemory, "cannot allocate a thread pool");
  if (threads > 1) {
    pool->workers_ = new (std::nothrow) Worker[threads - 1];
    if (pool->workers_ == nullptr) {
      return Status::error(StatusCode::kOutOfMemory, "cannot allocate %zu workers", threads - 1);
    }
    for (size_t i = 0; i + 1 < threads; ++i) {
      Worker& worker = pool->workers_[i];
      worker.pool = pool.get();
      worker.slot = i + 1;
      const int error = pthread_create(&worker.thread, nullptr, &ThreadPool::worker_main, &worker);
      if (error != 0) {
        // The destructor joins the ones that started.
        return Status::error(StatusCode::kBackendError, "cannot start worker thread %zu of %zu (error %d)",
                             i + 1, threads - 1, error);
      }
      pool->started_ = i + 1;
    }
  }
  *out = std::move(pool);
  return Status::ok();
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(mutex_);  // a worker is either waiting or will see stop_
  }
  wake_.notify_all();
  for (size_t i = 0; i < started_; ++i) (void)pthread_join(workers_[i].thread, nullptr);
  delete[] workers_;
}

void* ThreadPool::worker_main(void* opaque) {
  Worker* worker = static_cast<Worker*>(opaque);
  worker->pool->worker_loop(worker->slot);
  return nullptr;
}

void ThreadPool::worker_loop(size_t slot) {
  uint64_t seen = 0;  // the last generation this worker looked at
  for (;;) {
    uint64_t word = claim_.load(std::memory_order_acquire);
    if (generation_of(word) == seen) {
      // Spin briefly: jobs of one translate() often follow each other
      // within microseconds, and waking a sleeper costs more than that.
      // Not on the caller's CPU, though: there the spin would take the
      // CPU from the caller (when other processes fill the rest, the
      // scheduler puts a woken worker there).
      const int64_t deadline = now_us() + kSpinMicroseconds;
      for (unsigned spins = 1;; ++spins) {
        if (stop_.load(std::memory_order_relaxed)) return;
        word = claim_.load(std::memory_order_acquire);
        if (generation_of(word) != seen) break;
        if (spins % kSpinsPerCheck == 1 &&
            current_cpu() == caller_cpu_.load(std::memory_order_relaxed)) {
          break;
        }
        if (spins % kSpinsPerCheck == 0) {
          if (now_us() >= deadline) break;
        } else {
          cpu_relax();
        }
      }
      if (generation_of(word) == seen) {
        // Sleep until run() publishes a new job. sleepers_ is raised before
        // the claim word is read again (both seq_cst), and run() stores the
        // word before it reads sleepers_ (seq_cst): either this worker sees
        // the new job or run() sees a sleeper and notifies under the mutex.
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        while (!stop_.load(std::memory_order_seq_cst) &&
               generation_of(claim_.load(std::memory_order_seq_cst)) == seen) {
          wake_.wait(lock);
        }
        sleepers_.fetch_sub(1, std::memory_order_seq_cst);
        if (stop_.load(std::memory_order_seq_cst)) return;
        continue;
      }
    }
    seen = generation_of(word);
    (void)work(seen, slot);
  }
}

size_t ThreadPool::work(uint64_t generation, size_t slot) {
  // Read once per job. If run() has moved on to a later job meanwhile these
  // may be that job's, but then no claim below succeeds: run() wrote them
  // after it saw every chunk of `generation` claimed, and the acquire loads
  // order that before the compare-exchanges.
  const ThreadPoolTask task = task_.load(std::memory_order_acquire);
  void* const context = context_.load(std::memory_order_acquire);
  size_t ran = 0;
  uint64_t word = claim_.load(std::memory_order_acquire);
  while (generation_of(word) == generation && next_of(word) < count_of(word)) {
    if (claim_.compare_exchange_weak(word, word + kOneChunk, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      task(context, next_of(word), slot);
      done_.fetch_add(1, std::memory_order_release);
      ++ran;
      word = claim_.load(std::memory_order_acquire);
    }
  }
  return ran;
}

void ThreadPool::run(size_t chunks, ThreadPoolTask task, void* context,
                     size_t estimated_nanoseconds) {
  if (chunks == 0) return;
  if (threads_ == 1 || chunks == 1) {
    for (size_t c = 0; c < chunks; ++c) task(context, c, 0);
    return;
  }
  caller_cpu_.store(current_cpu(), std::memory_order_relaxed);
  const int64_t start = now_ns();
  if (start < solo_until_ns_) {  // backing off after a stall: run alone
    for (size_t c = 0; c < chunks; ++c) task(context, c, 0);
    return;
  }
  // Only the owner thread calls run(), so the generation is read here
  // without a race; 0 is skipped (the workers start having "seen" it).
  uint64_t generation = (generation_of(claim_.load(std::memory_order_relaxed)) + 1) & 0xFFFFFFFFu;
  if (generation == 0) generation = 1;
  done_.store(0, std::memory_order_relaxed);
  task_.store(task, std::memory_order_release);
  context_.store(context, std::memory_order_release);
  claim_.store((generation << 32) | static_cast<uint64_t>(chunks), std::memory_order_seq_cst);
  // Wake sleeping workers? Only for a job big enough to pay for the wake,
  // and only while waking has paid off (choose_wake()).
  Choice choice = Choice::kNone;
  if ((estimated_nanoseconds == 0 || estimated_nanoseconds >= kWakeNanoseconds) &&
      sleepers_.load(std::memory_order_seq_cst) > 0) {
    choice = choose_wake();
    if (choice == Choice::kWake) {
      { std::lock_guard<std::mutex> lock(mutex_); }
      wake_.notify_all();
    }
  }
  const size_t ran = work(generation, 0);
  bool stalled = false;
  if (done_.load(std::memory_order_acquire) != chunks) {
    // Every chunk is claimed now; wait for the ones other threads are
    // running (a worker that never woke holds none, so it is never waited
    // for). Spin, without yielding (under load a yield hands this CPU to
    // another process for a whole time slice), while the wait is short
    // enough for a running worker finishing its chunk; past that the worker
    // was descheduled holding it, and yielding lets it have a CPU sooner.
    const int64_t waiting_since = now_ns();
    const int64_t stall_ns = stall_nanoseconds(waiting_since - start, ran);
    unsigned spins = 0;
    while (done_.load(std::memory_order_acquire) != chunks) {
      if (stalled) {
        (void)sched_yield();
      } else {
        cpu_relax();
        if (++spins % kSpinsPerCheck == 0) stalled = now_ns() - waiting_since > stall_ns;
      }
    }
  }
  const int64_t end = now_ns();
  if (choice != Choice::kNone && estimated_nanoseconds != 0) {
    learn(choice, static_cast<double>(end - start) / static_cast<double>(estimated_nanoseconds));
  }
  if (stalled) {
    // Run alone for a while, longer after each stall in a row, then try the
    // workers again: as fast as one thread when they cannot get a CPU.
    solo_until_ns_ = end + backoff_ns_;
    backoff_ns_ = backoff_ns_ * 2 < kMaxBackoffNanoseconds ? backoff_ns_ * 2 : kMaxBackoffNanoseconds;
    ++stalls_;
  } else {
    backoff_ns_ = kMinBackoffNanoseconds;
  }
}

void ThreadPool::wake_for(size_t estimated_nanoseconds) {
  if (threads_ == 1 || estimated_nanoseconds < kWakeNanoseconds) return;
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
  if (now_ns() < solo_until_ns_) return;
  if (wake_cost_ != 0.0 && alone_cost_ != 0.0 && wake_cost_ > alone_cost_) return;
  caller_cpu_.store(current_cpu(), std::memory_order_relaxed);
  // An empty job: a new generation with no chunks. Woken workers find
  // nothing to claim and spin for the next job (worker_loop).
  uint64_t generation = (generation_of(claim_.load(std::memory_order_relaxed)) + 1) & 0xFFFFFFFFu;
  if (generation == 0) generation = 1;
  done_.store(0, std::memory_order_relaxed);
  claim_.store(generation << 32, std::memory_order_seq_cst);
  { std::lock_guard<std::mutex> lock(mutex_); }
  wake_.notify_all();
}

ThreadPool::Choice ThreadPool::choose_wake() {
  // Mostly the choice whose jobs ran faster per unit of estimated work; one
  // job in kExploreEvery (at random, so not always the same kind of job in
  // a repeating pattern) takes the other one, to keep both measured.
  random_ ^= random_ << 13;
  random_ ^= random_ >> 7;
  random_ ^= random_ << 17;
  const bool explore = random_ % kExploreEvery == 0;
  const bool wake = wake_cost_ <= alone_cost_;
  return wake != explore ? Choice::kWake : Choice::kAlone;
}

void ThreadPool::learn(Choice choice, double cost) {
  double& average = choice == Choice::kWake ? wake_cost_ : alone_cost_;
  average = average == 0.0 ? cost : average + (cost - average) / 8.0;
}

int64_t ThreadPool::stall_nanoseconds(int64_t working_ns, size_t ran) {
  // A chunk takes about working_ns / ran here; a worker that needs much
  // longer to finish its last one was descheduled while holding it.
  const int64_t chunk_ns = ran > 0 ? working_ns / static_cast<int64_t>(ran) : working_ns;
  return 4 * chunk_ns > kMinStallNanoseconds ? 4 * chunk_ns : kMinStallNanoseconds;
}

}  // namespace edgemt
