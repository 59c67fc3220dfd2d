// What handing a job to the ThreadPool costs: the figure behind the default
// of TranslatorOptions::min_parallel_nanoseconds (core/parallel.h).
//
//   build/tests/benchmarks/edgemt_thread_pool_benchmark
//
// BM_SplitJob runs `work_ns` of busy work cut into 8 chunks through
// ThreadPool::run with the workers spinning (wake_for before each job, as
// translate() calls it before its burst of jobs: without it a worker that
// fell asleep is never woken for jobs this small). BM_SameWorkAlone runs
// the same work on the calling thread. Splitting pays where
// BM_SplitJob/threads:2 beats BM_SameWorkAlone.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>

#include "core/thread_pool.h"

namespace {

constexpr size_t kChunks = 8;

// Busy work of about `ns` nanoseconds (a clock loop: what a kernel chunk
// does to the CPU is beside the point here, only its duration is).
void spin_for(int64_t ns) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              start)
             .count() < ns) {
  }
}

void BM_SplitJob(benchmark::State& state) {
  const int64_t work_ns = state.range(0);
  const size_t threads = static_cast<size_t>(state.range(1));
  std::unique_ptr<edgemt::ThreadPool> pool;
  if (!edgemt::ThreadPool::create(threads, &pool).is_ok()) {
    state.SkipWithError("ThreadPool::create failed");
    return;
  }
  int64_t chunk_ns = work_ns / static_cast<int64_t>(kChunks);
  for (auto _ : state) {
    pool->wake_for(edgemt::ThreadPool::kWakeNanoseconds);  // one atomic load while they spin
    pool->run(
        kChunks, [](void* context, size_t, size_t) { spin_for(*static_cast<int64_t*>(context)); },
        &chunk_ns, static_cast<size_t>(work_ns));
  }
}
BENCHMARK(BM_SplitJob)
    ->ArgNames({"work_ns", "threads"})
    ->ArgsProduct({{0, 1000, 2000, 4000, 8000}, {1, 2}});

void BM_SameWorkAlone(benchmark::State& state) {
  const int64_t chunk_ns = state.range(0) / static_cast<int64_t>(kChunks);
  for (auto _ : state) {
    for (size_t c = 0; c < kChunks; ++c) spin_for(chunk_ns);
  }
}
BENCHMARK(BM_SameWorkAlone)->ArgName("work_ns")->Arg(0)->Arg(1000)->Arg(2000)->Arg(4000)->Arg(8000);

}  // namespace

BENCHMARK_MAIN();
