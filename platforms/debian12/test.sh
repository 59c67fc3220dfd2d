#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test (C++ and Python) under
# ctest. Tests that need ../shared (the PyTorch checkpoint, Multi30k) carry
# the label 'checkpoint' and report SKIPPED when it is absent. Before the
# native tests: the aarch64 cross build and its kernel tests under qemu-user,
# then the whole suite under ASan+UBSan and 60 s of every fuzz target, then
# the thread tests under ThreadSanitizer. The native run includes the install
# tests (label install: cmake --install, consumers through find_package and
# pkg-config, edgemt as a subproject) and the embedded C example.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bash "$root/platforms/debian12/install-deps.sh"
bash "$root/platforms/debian12/build.sh"
# AArch64 first (ctest's summary of the native run must come last). The
# cross build catches what only GCC's aarch64 back end rejects (an internal
# compiler error once went unnoticed across several commits); the kernel
# tests under qemu-user hold the NEON and NEON dot-product int8 kernels to
# the integer reference on a CPU with fp16 arithmetic and dot product
# (cortex-a76) and on one without (cortex-a53), and the embedded C example
# (platforms/embedded-c: model linked in, static arena, no heap after
# start-up) translates its sentence as on x86. About a minute of tests per
# CPU; the whole suite under qemu (about an hour per CPU) is test-aarch64.sh
# without a filter. EDGEMT_CI_AARCH64=0 skips this step.
if [ "${EDGEMT_CI_AARCH64:-1}" != 0 ]; then
  EDGEMT_AARCH64_CTEST_ARGS='-R ^(kernels/|platform[.]qemu_cpu$|platform[.]embedded_c$)' \
    bash "$root/platforms/debian12/test-aarch64.sh" cortex-a76 cortex-a53
fi
# Sanitizers: the whole suite again under AddressSanitizer + UBSan (+ leak
# checks), built by clang 14 with the libFuzzer targets (CMakePresets.json
# "asan-ubsan"), then every fuzz target for 60 s from its seed corpus
# (platforms/debian12/fuzz.sh). A report of any kind fails CI. UBSan's vptr
# check is off (-fno-sanitize=vptr): it needs the type info the runtime,
# built with -fno-rtti, does not have, and flagged every virtual call from a
# test into it (the model families' EncoderDecoder). About 25 minutes on 2
# cores; EDGEMT_CI_SANITIZERS=0 skips this step.
if [ "${EDGEMT_CI_SANITIZERS:-1}" != 0 ]; then
  jobs=$(nproc 2>/dev/null || echo 2)
  (cd "$root" && cmake --preset asan-ubsan && cmake --build --preset asan-ubsan -j "$jobs")
  (cd "$root/build-asan" &&
     ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure)
  bash "$root/platforms/debian12/fuzz.sh" "${EDGEMT_CI_FUZZ_SECONDS:-60}" "$root/build-asan"
fi
# ThreadSanitizer (CMakePresets.json "tsan", clang 14): the tests that run
# threads (the C API's, the thread pool's, the translator's, and any whose
# name says threads), built alone: the test executable, not the tools. A
# data race report fails CI. The filter names prefixes, not whole names, so
# that tests added under them are picked up. EDGEMT_CI_TSAN=0 skips this step.
if [ "${EDGEMT_CI_TSAN:-1}" != 0 ]; then
  jobs=$(nproc 2>/dev/null || echo 2)
  (cd "$root" && cmake --preset tsan &&
     cmake --build --preset tsan -j "$jobs" --target edgemt_runtime_tests)
  (cd "$root" && ctest --preset tsan -R '^(capi/|core/(thread_pool|parallel)|translator)|thread' \
     --no-tests=error)
fi
cd "$root/build"
# Serially: several tests run 2-8 threads of their own, and a few check
# CPU time (idle workers sleep) or speed loosely.
ctest --output-on-failure
