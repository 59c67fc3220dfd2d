// Prints the AArch64 Linux HWCAP bits that edgemt's CPU dispatch depends on
// (getauxval(AT_HWCAP), which qemu-user fills from the emulated CPU), one
// "name 0|1" per line. check_qemu_cpu.cmake compares them with the CPU the
// cross build's tests were told to run on (platform.qemu_cpu).
#include <sys/auxv.h>

#include <cstdio>

#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1UL << 1)
#endif
#ifndef HWCAP_FPHP
#define HWCAP_FPHP (1UL << 9)
#endif
#ifndef HWCAP_ASIMDHP
#define HWCAP_ASIMDHP (1UL << 10)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1UL << 20)
#endif

int main() {
  const unsigned long hwcap = getauxval(AT_HWCAP);
  std::printf("asimd %d\n", (hwcap & HWCAP_ASIMD) != 0 ? 1 : 0);
  std::printf("fphp %d\n", (hwcap & HWCAP_FPHP) != 0 ? 1 : 0);
  std::printf("asimdhp %d\n", (hwcap & HWCAP_ASIMDHP) != 0 ? 1 : 0);
  std::printf("asimddp %d\n", (hwcap & HWCAP_ASIMDDP) != 0 ? 1 : 0);
  return 0;
}
