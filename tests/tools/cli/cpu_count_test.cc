// cli::usable_cpu_count follows the affinity mask (what taskset and cgroup
// cpusets restrict). Built into edgemt_cli_tests with
// tools/cli/cpu_count.cc (tests/CMakeLists.txt).
#include "cli/cpu_count.h"

#include <doctest/doctest.h>
#include <sched.h>
#include <unistd.h>

#include <string>

namespace edgemt::cli {
namespace {

// Restores the calling thread's affinity mask when the test case ends.
class AffinityGuard {
 public:
  AffinityGuard() { saved_ok_ = sched_getaffinity(0, sizeof(saved_), &saved_) == 0; }
  ~AffinityGuard() {
    if (saved_ok_) (void)sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  bool ok() const { return saved_ok_; }
  const cpu_set_t& saved() const { return saved_; }

 private:
  cpu_set_t saved_;
  bool saved_ok_ = false;
};

TEST_CASE("cli/cpu_count: at least one CPU, at most the configured ones") {
  const size_t cpus = usable_cpu_count();
  CHECK(cpus >= 1);
  CHECK(cpus <= static_cast<size_t>(sysconf(_SC_NPROCESSORS_CONF)));
}

TEST_CASE("cli/cpu_count: a mask of one CPU counts as one") {
  AffinityGuard guard;
  REQUIRE(guard.ok());
  int first = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; ++cpu) {
    if (CPU_ISSET(cpu, &guard.saved())) first = cpu;
  }
  REQUIRE(first >= 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);
  CHECK(usable_cpu_count() == 1);
}

}  // namespace
}  // namespace edgemt::cli
