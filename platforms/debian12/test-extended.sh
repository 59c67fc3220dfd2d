#!/usr/bin/env bash
# The extended test tier (run as root; .ci/run runs it before the quick tier,
# the README's test command platforms/debian12/test.sh). What it adds to the
# native run, each step a timed stage:
#
#   aarch64      the cross build (warnings as errors: it catches what only
#                GCC's aarch64 back end rejects, as an internal compiler error
#                once did) and, under qemu-user on a Cortex-A76 (fp16
#                arithmetic, dot product) and a Cortex-A53 (neither), the
#                kernel tests (kernels/*: the NEON and NEON dot-product kernels
#                against the integer reference), the CPU probe and the embedded
#                C example (platforms/embedded-c: model linked in, static
#                arena, no heap after start-up) translating its sentence as on
#                x86. The whole suite under qemu is test-aarch64.sh without a
#                filter (about an hour per CPU; not part of CI).
#   asan-ubsan   clang 14 with AddressSanitizer + UBSan (+ leak checks) and
#                the libFuzzer targets (CMakePresets.json "asan-ubsan"): every
#                C++ test executable (labels unit, model, example), the CLI
#                smoke (tools.cli.smoke: every CLI mode, error paths included)
#                and each fuzz target over its seeds (label fuzz). The Python
#                end-to-end tests (BLEU, all 1,000 reference lines, the
#                converters) are not registered there: they measure outputs
#                that a sanitizer does not change, and the quick tier runs
#                them. UBSan's vptr check is off (-fno-sanitize=vptr): it needs
#                the type info the runtime, built with -fno-rtti, lacks.
#   fuzz         every fuzz target for EDGEMT_CI_FUZZ_SECONDS (default 60)
#                from its seed corpus, one target per CPU at a time
#                (platforms/debian12/fuzz.sh)
#   tsan         clang 14 with ThreadSanitizer (preset "tsan"): the tests that
#                run threads (the C API's, the thread pool's, parallel_for's,
#                the translator's, any named for threads), the test executable
#                alone being built. The filter names prefixes, not whole names,
#                so that tests added under them are picked up.
#
# Any finding fails the tier (a sanitizer report aborts the process; ctest
# and fuzz.sh then exit non-zero). Builds go through ccache when it is
# installed. EDGEMT_CI_AARCH64=0, EDGEMT_CI_SANITIZERS=0 (ASan+UBSan and
# fuzzing) and EDGEMT_CI_TSAN=0 skip a stage. Ends with every stage's wall
# time and the 10 slowest tests of each ctest run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/platforms/debian12/ccache.sh"
source "$root/platforms/debian12/stages.sh"
jobs=$(nproc 2>/dev/null || echo 2)
mapfile -t launcher < <(cmake_launcher_args)

# Sanitizer reports abort the process (ctest sees a failure); leaks count.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1}"

stage "install dependencies" bash "$root/platforms/debian12/install-deps.sh"

if [ "${EDGEMT_CI_AARCH64:-1}" != 0 ]; then
  stage "aarch64: cross build, tests under qemu (a76, a53)" \
    env EDGEMT_AARCH64_CTEST_ARGS="-j $jobs -R ^(kernels/|platform[.]qemu_cpu$|platform[.]embedded_c$)" \
    bash "$root/platforms/debian12/test-aarch64.sh" cortex-a76 cortex-a53
fi

asan_build() {
  (cd "$root" && cmake --preset asan-ubsan "${launcher[@]}" &&
     cmake --build --preset asan-ubsan -j "$jobs")
}
asan_tests() {
  run_ctest "$root/build-asan/ctest.log" "$root/build-asan" --output-on-failure -j "$jobs"
}
if [ "${EDGEMT_CI_SANITIZERS:-1}" != 0 ]; then
  stage "asan-ubsan: configure and build" asan_build
  stage "asan-ubsan: C++ tests, CLI smoke, fuzz seeds" asan_tests
  stage "fuzz: every target ${EDGEMT_CI_FUZZ_SECONDS:-60} s" \
    bash "$root/platforms/debian12/fuzz.sh" "${EDGEMT_CI_FUZZ_SECONDS:-60}" "$root/build-asan"
fi

tsan_build() {
  (cd "$root" && cmake --preset tsan "${launcher[@]}" &&
     cmake --build --preset tsan -j "$jobs" --target edgemt_runtime_tests)
}
tsan_tests() {
  run_ctest "$root/build-tsan/ctest.log" "$root" --preset tsan -j "$jobs" \
    -R '^(capi/|core/(thread_pool|parallel)|translator)|thread' --no-tests=error
}
if [ "${EDGEMT_CI_TSAN:-1}" != 0 ]; then
  stage "tsan: configure and build the test executable" tsan_build
  stage "tsan: thread tests" tsan_tests
fi

report_stages "extended tier: wall time per stage"
