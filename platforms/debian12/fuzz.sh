#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz-enabled build for SECONDS each
# (default 60), starting from the committed seed corpus; exits non-zero on
# the first crash, leak, timeout or sanitizer report (libFuzzer writes the
# input to build-asan/fuzz-artifacts/). Prints executions per target.
#
#   bash platforms/debian12/fuzz.sh [SECONDS] [BUILD_DIR] [TARGET...]
#
# The build is the "asan-ubsan" preset (cmake --preset asan-ubsan), which
# test.sh makes. Work corpora grow in BUILD_DIR/fuzz-corpus/<target>/ and
# are kept between runs; only the seeds are in the repository.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
build=${2:-$root/build-asan}
shift $(( $# > 2 ? 2 : $# ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(model_file translate text sentencepiece_model)

# Inputs up to 1 MiB for the text path (lines past its 4 KiB limit and past
# the tokenizer's); model files up to 256 KiB (the seeds are a few KiB).
max_len_of() {
  case "$1" in
    text) echo 1048576 ;;
    model_file) echo 262144 ;;
    *) echo 65536 ;;
  esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$build/fuzz-artifacts"
for target in "${targets[@]}"; do
  binary="$build/tests/fuzz/${target}_fuzzer"
  if [ ! -x "$binary" ]; then
    echo "fuzz: $binary is not built (cmake --preset asan-ubsan && cmake --build --preset asan-ubsan)" >&2
    exit 1
  fi
  corpus="$build/fuzz-corpus/$target"
  mkdir -p "$corpus"
  echo "fuzz: $target for ${seconds}s (cpu family $(awk -F': ' '/^cpu family/ {print $2; exit}' /proc/cpuinfo))"
  log="$build/fuzz-artifacts/$target.log"
  if ! "$binary" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2560 \
        -max_len="$(max_len_of "$target")" -print_final_stats=1 \
        -artifact_prefix="$build/fuzz-artifacts/$target-" \
        "$corpus" "$root/tests/fuzz/corpus/$target" > "$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz: $target FAILED (log $log; the input is in $build/fuzz-artifacts/)" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov: .* ft:" "$log" | tail -n 3
done
echo "fuzz: every target ran ${seconds}s without a finding"
