// How many CPUs this process may run on, and the warning for asking for more
// threads than that.
//
// pthreadpool's workers spin while they wait for work. With more runnable
// threads than CPUs the spinning workers take the CPU from the ones holding
// work, and a translation runs many times slower than with fewer threads
// (measured ~30x with --threads 2 on one free core). The runtime core prints
// nothing, so the command line says it.
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

}  // namespace edgemt::cli
