#!/usr/bin/env bash
# The quick test tier, the README's test command (run as root): installs
# dependencies, builds (Release, warnings as errors, through ccache when it
# is installed) and runs every native test under ctest, C++ and Python, two
# at a time on 2 CPUs (one per CPU). Tests that need ../shared (the PyTorch
# checkpoint, Multi30k) carry the label 'checkpoint' and report SKIPPED when
# it is absent. The native run includes the install tests (label install:
# cmake --install, consumers through find_package and pkg-config, edgemt as a
# subproject), the embedded C example, the CLI smoke and the WebAssembly
# build with its tests under Node.js and headless Chromium (label wasm).
#
# The extended tier (the aarch64 cross build under qemu, ASan+UBSan, fuzzing,
# ThreadSanitizer) is platforms/debian12/test-extended.sh; .ci/run runs both.
# Ends with every stage's wall time, the 10 slowest tests, then ctest's
# summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/platforms/debian12/stages.sh"
jobs=$(nproc 2>/dev/null || echo 2)
log="$root/build/ctest.log"

native_tests() {
  # Tests that must not share the machine (timing, CPU time, several
  # threads of their own) are RUN_SERIAL in their CMake files.
  run_ctest "$log" "$root/build" --output-on-failure -j "$jobs"
}

stage "install dependencies" bash "$root/platforms/debian12/install-deps.sh"
stage "build (Release)" bash "$root/platforms/debian12/build.sh"
stage "native tests (ctest -j $jobs)" native_tests
report_stages "quick tier: wall time per stage"

# .ci/run sets EDGEMT_CI_STARTED (seconds since the epoch) before both tiers.
if [ -n "${EDGEMT_CI_STARTED:-}" ]; then
  ci_seconds=$(($(date +%s) - EDGEMT_CI_STARTED))
  printf '  %-52s %s\n' "CI total (both tiers)" "$(format_seconds "$ci_seconds")"
  if [ "$ci_seconds" -gt 2700 ]; then
    echo "WARNING: CI took $(format_seconds "$ci_seconds"), past the 45-minute budget" \
         "(the hard limit is 90): make room before the next large change." >&2
  fi
fi

# ctest's summary of the native run comes last.
echo
sed -n '/tests passed, /,$p' "$log"
