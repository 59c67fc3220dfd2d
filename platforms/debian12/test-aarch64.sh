#!/usr/bin/env bash
# Cross-builds edgemt for aarch64 Linux (Release, warnings as errors; through
# ccache when installed, platforms/debian12/ccache.sh) and runs
# its tests under qemu-user, once per CPU named (run as root: it installs the
# cross compiler, qemu and the arm64 sysroot first).
#
#   bash platforms/debian12/test-aarch64.sh                        # cortex-a76
#   bash platforms/debian12/test-aarch64.sh cortex-a53             # same build, other CPU
#   bash platforms/debian12/test-aarch64.sh cortex-a76 cortex-a53  # both, one after the other
#
# CPUs: the arguments, else $EDGEMT_QEMU_CPU, else cortex-a76 (fp16 arithmetic
# and dot product; cortex-a53 has neither). One build serves every CPU: the
# emulator (platforms/cmake/qemu-aarch64-run) reads EDGEMT_QEMU_CPU at test
# time. Under the cross build ctest runs the C++ tests (labels unit, model),
# platform.qemu_cpu (the emulated CPU has the features its name promises) and
# tools.cli.translate_matches_reference (edgemt translate under qemu prints
# exactly the reference translations the x86 build prints); the Python tests
# and micro-benchmarks are host-only and not configured.
#
# Environment:
#   EDGEMT_AARCH64_BUILD_DIR  build directory (default build-aarch64 in the repository)
#   EDGEMT_AARCH64_SYSROOT    arm64 sysroot (default /opt/edgemt-aarch64-sysroot)
#   EDGEMT_AARCH64_CTEST_ARGS extra ctest arguments, e.g. "-L unit" or "-j 2"
#   EDGEMT_AARCH64_TEST_TIMEOUT  per-test timeout in seconds (default 3600:
#                             emulation is ~100x slower than native)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/platforms/debian12/ccache.sh"
build=${EDGEMT_AARCH64_BUILD_DIR:-$root/build-aarch64}
jobs=$(nproc 2>/dev/null || echo 2)
if [ $# -gt 0 ]; then
  cpus=("$@")
else
  cpus=("${EDGEMT_QEMU_CPU:-cortex-a76}")
fi
read -r -a ctest_args <<< "${EDGEMT_AARCH64_CTEST_ARGS:-}"

t0=$SECONDS
bash "$root/platforms/debian12/install-aarch64.sh"
t_install=$((SECONDS - t0))

t0=$SECONDS
mapfile -t launcher < <(cmake_launcher_args)
cmake -S "$root" -B "$build" \
  -DCMAKE_TOOLCHAIN_FILE="$root/platforms/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DEDGEMT_WERROR=ON "${launcher[@]}"
cmake --build "$build" -j "$jobs"
t_build=$((SECONDS - t0))

summary=()
status=0
for cpu in "${cpus[@]}"; do
  echo
  echo "== ctest under qemu-aarch64 -cpu $cpu"
  t0=$SECONDS
  rc=0
  # Serially by default, as on x86: several tests run 2-3 threads of their own.
  (cd "$build" && EDGEMT_QEMU_CPU="$cpu" ctest --output-on-failure \
     --timeout "${EDGEMT_AARCH64_TEST_TIMEOUT:-3600}" "${ctest_args[@]}") || rc=$?
  summary+=("ctest $cpu $((SECONDS - t0)) s (exit $rc)")
  [ "$rc" = 0 ] || status=1
done

echo
echo "test-aarch64: install ${t_install} s, configure+build ${t_build} s"
for line in "${summary[@]}"; do echo "test-aarch64: $line"; done
exit "$status"
