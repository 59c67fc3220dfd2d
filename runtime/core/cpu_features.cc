#include "core/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace edgemt {
namespace {

bool override_is(const char* wanted) {
  const char* value = std::getenv("EDGEMT_CPU_FEATURES");
  return value != nullptr && std::strcmp(value, wanted) == 0;
}

#if defined(__x86_64__)
// AVX-VNNI: CPUID leaf 7, sub-leaf 1, EAX bit 4 (Intel SDM). Asked
// directly: __builtin_cpu_supports has no name for it in clang 14. The
// registers it uses are AVX2's, whose OS support the AVX2 test checks.
bool has_avx_vnni() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (eax & (1u << 4)) != 0;
}
#endif

CpuFeatures detect() {
  CpuFeatures f;
  if (override_is("portable")) return f;
  // Claims fp16 arithmetic so that f16 files take XNNPACK's f16 GEMMs
  // wherever XNNPACK has them (on x86 it emulates them with F16C: slow, but
  // it lets the native-f16 path be tested on the build machine).
  f.fp16_arith = override_is("fp16");
#if defined(__x86_64__)
  __builtin_cpu_init();
  f.sse42 = __builtin_cpu_supports("sse4.2");
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  f.avx512_vnni = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  f.avx_vnni = f.avx2 && has_avx_vnni();
  f.intel = __builtin_cpu_is("intel");
  // "avx2": an AVX2-only CPU's kernels (AMD Zen 3, Intel before Alder Lake);
  // "avx-vnni": those of an AVX2 CPU with AVX-VNNI and no AVX-512 (Intel
  // Core from Alder Lake on); "avx512bw": those of an AVX-512 CPU without
  // VNNI (Intel Skylake-SP/X).
  if (override_is("avx2")) f.avx512 = f.avx512_vnni = f.avx_vnni = false;
  if (override_is("avx-vnni")) f.avx512 = f.avx512_vnni = false;
  if (override_is("avx512bw")) f.avx512_vnni = f.avx_vnni = false;
#elif defined(__aarch64__)
  f.neon = true;
#if defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  f.neon_dotprod = (hwcap & HWCAP_ASIMDDP) != 0;
  f.crc32 = (hwcap & HWCAP_CRC32) != 0;
  f.fp16_arith = f.fp16_arith || ((hwcap & HWCAP_FPHP) != 0 && (hwcap & HWCAP_ASIMDHP) != 0);
#endif
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();  // thread-safe, on first use
  return features;
}

}  // namespace edgemt
