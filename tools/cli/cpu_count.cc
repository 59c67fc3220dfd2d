#include "cli/cpu_count.h"

#include <sched.h>
#include <unistd.h>

#include <cstdio>

namespace edgemt::cli {

size_t usable_cpu_count() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
    const int count = CPU_COUNT(&mask);
    if (count > 0) return static_cast<size_t>(count);
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<size_t>(online) : 1;
}

std::string oversubscription_warning(size_t threads, size_t cpus) {
  if (threads <= cpus) return "";
  return "edgemt: warning: " + std::to_string(threads) + " threads but this process may run on " +
         std::to_string(cpus) + " CPU(s); waiting worker threads spin and take the CPU from " +
         "busy ones, so this is likely much slower than --threads " + std::to_string(cpus);
}

void warn_if_more_threads_than_cpus(size_t threads) {
  const std::string warning = oversubscription_warning(threads, usable_cpu_count());
  if (!warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());
}

}  // namespace edgemt::cli
