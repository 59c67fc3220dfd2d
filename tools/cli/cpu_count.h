// How many CPUs this process may run on: `edgemt bench --busy` starts one
// competing process per CPU by default and prints the count.
//
// (Asking for more threads than CPUs is no longer warned about: the run
// phase's workers sleep instead of spinning and the calling thread never
// waits for a worker to get a CPU, so pinned to one CPU `--threads 2` runs
// as fast as `--threads 1`; see docs/usage.md, threads.)
#pragma once

#include <cstddef>

namespace edgemt::cli {

// CPUs in this process's affinity mask (taskset, cgroup cpusets), else the
// online CPUs; at least 1.
size_t usable_cpu_count();

}  // namespace edgemt::cli
