// cpu_features() against what the kernel reports in /proc/cpuinfo (Linux):
// x86 "flags" (avx2, avx512f/bw/vl/dq/vnni, avx_vnni) and "vendor_id", AArch64
// "Features" (asimddp, fphp/asimdhp). With EDGEMT_CPU_FEATURES=portable everything is off.
#include "core/cpu_features.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace edgemt {
namespace {

// The words of the first "flags" / "Features" line of /proc/cpuinfo.
std::set<std::string> cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      std::set<std::string> flags;
      for (std::string word; words >> word;) flags.insert(word);
      return flags;
    }
  }
  return {};
}

#if defined(__x86_64__)
// The value of the first "key : value" line of /proc/cpuinfo, or "".
std::string cpuinfo_value(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (line.rfind(key, 0) == 0 && colon != std::string::npos) {
      std::istringstream value(line.substr(colon + 1));
      std::string word;
      value >> word;
      return word;
    }
  }
  return "";
}
#endif

TEST_CASE("core/cpu_features: agrees with /proc/cpuinfo") {
  const CpuFeatures& f = cpu_features();
  CHECK(&f == &cpu_features());  // detected once
  const char* mode = std::getenv("EDGEMT_CPU_FEATURES");
  if (mode != nullptr && std::strcmp(mode, "portable") == 0) {
    CHECK_FALSE(f.avx2);
    CHECK_FALSE(f.avx512_vnni);
    CHECK_FALSE(f.avx_vnni);
    CHECK_FALSE(f.neon);
    CHECK_FALSE(f.neon_dotprod);
    CHECK_FALSE(f.fp16_arith);
    return;
  }
  const bool forced_fp16 = mode != nullptr && std::strcmp(mode, "fp16") == 0;
  const std::set<std::string> flags = cpuinfo_flags();
  if (flags.empty()) {
    MESSAGE("no /proc/cpuinfo flags line: nothing to compare with");
    return;
  }
  auto has = [&](const char* flag) { return flags.count(flag) != 0; };
#if defined(__x86_64__)
  REQUIRE(has("sse2"));
  CHECK(f.avx2 == has("avx2"));
  auto mode_is = [&](const char* name) { return mode != nullptr && std::strcmp(mode, name) == 0; };
  const bool avx2_only = mode_is("avx2");
  const bool avx512_hidden = avx2_only || mode_is("avx-vnni");
  const bool vnni_hidden = avx2_only || mode_is("avx512bw");
  CHECK(f.avx512 == (!avx512_hidden && has("avx512f") && has("avx512bw") && has("avx512vl") &&
                     has("avx512dq")));
  CHECK(f.avx512_vnni == (!avx512_hidden && !vnni_hidden && has("avx512f") && has("avx512bw") &&
                          has("avx512vl") && has("avx512_vnni")));
  CHECK(f.avx_vnni == (!vnni_hidden && has("avx2") && has("avx_vnni")));
  CHECK(f.intel == (cpuinfo_value("vendor_id") == "GenuineIntel"));
  CHECK_FALSE(f.neon);
  CHECK(f.fp16_arith == forced_fp16);
#elif defined(__aarch64__)
  CHECK(f.neon);
  if (!has("asimd")) {  // qemu-user may show the host's /proc/cpuinfo
    MESSAGE("/proc/cpuinfo does not describe an AArch64 CPU: HWCAP not compared");
    return;
  }
  CHECK(f.neon_dotprod == has("asimddp"));
  CHECK(f.fp16_arith == (forced_fp16 || (has("fphp") && has("asimdhp"))));
  CHECK_FALSE(f.avx2);
#endif
}

}  // namespace
}  // namespace edgemt
