// How many CPUs this process may run on, and the warning for asking for more
// threads than that.
//
// pthreadpool's workers spin while they wait for work. With more runnable
// threads than CPUs the spinning workers take the CPU from the ones holding
// work, and a translation runs many times slower than with fewer threads
// (50 sentences, pinned to one CPU: 9.9 s with --threads 2, 0.16 s with 1).
// The runtime core prints nothing, so the command line says it.
#pragma once

#include <cstddef>
#include <string>

namespace edgemt::cli {

// CPUs in this process's affinity mask (taskset, cgroup cpusets), else the
// online CPUs; at least 1.
size_t usable_cpu_count();

// Empty when threads <= cpus; else one line (no trailing newline) saying
// that `threads` exceeds `cpus` and what that costs.
std::string oversubscription_warning(size_t threads, size_t cpus);

// Prints oversubscription_warning(threads, usable_cpu_count()) to stderr
// when it is not empty.
void warn_if_more_threads_than_cpus(size_t threads);

}  // namespace edgemt::cli
