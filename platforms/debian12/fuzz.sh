#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz-enabled build for SECONDS each
# (default 60), starting from the committed seed corpus; exits non-zero on
# any crash, leak, timeout or sanitizer report (libFuzzer writes the input
# to BUILD_DIR/fuzz-artifacts/). Prints executions per target.
#
#   bash platforms/debian12/fuzz.sh [SECONDS] [BUILD_DIR] [TARGET...]
#
# Targets run side by side, one per CPU (EDGEMT_FUZZ_JOBS sets how many at
# once): each is one single-threaded process, so every target still gets its
# SECONDS of fuzzing while the stage takes SECONDS x targets / CPUs.
#
# The build is the "asan-ubsan" preset (cmake --preset asan-ubsan), which
# test-extended.sh makes. Work corpora grow in BUILD_DIR/fuzz-corpus/<target>/
# and are kept between runs; only the seeds are in the repository. When a
# finding is fixed, its input joins the seeds: copy it into
# tests/fuzz/corpus/<target>/ and commit it with the fix; every ASan run then
# replays it (ctest's fuzz.<target>.seeds) and every fuzz run starts from it.
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
jobs=${EDGEMT_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
mkdir -p "$build/fuzz-artifacts"
for target in "${targets[@]}"; do
  if [ ! -x "$build/tests/fuzz/${target}_fuzzer" ]; then
    echo "fuzz: $build/tests/fuzz/${target}_fuzzer is not built (cmake --preset asan-ubsan && cmake --build --preset asan-ubsan)" >&2
    exit 1
  fi
done

# fuzz_one TARGET: SECONDS of libFuzzer, its output in fuzz-artifacts/TARGET.log.
fuzz_one() {
  local target=$1
  local corpus="$build/fuzz-corpus/$target"
  mkdir -p "$corpus"
  "$build/tests/fuzz/${target}_fuzzer" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2560 \
    -max_len="$(max_len_of "$target")" -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/$target-" \
    "$corpus" "$root/tests/fuzz/corpus/$target" > "$build/fuzz-artifacts/$target.log" 2>&1
}

echo "fuzz: ${#targets[@]} targets for ${seconds}s each, $jobs at a time (cpu family $(awk -F': ' '/^cpu family/ {print $2; exit}' /proc/cpuinfo))"
failed=()
pids=()
names=()
# wait_first: waits for the oldest running target and records its result.
wait_first() {
  local rc=0
  wait "${pids[0]}" || rc=$?
  [ "$rc" = 0 ] || failed+=("${names[0]}")
  pids=("${pids[@]:1}")
  names=("${names[@]:1}")
}
for target in "${targets[@]}"; do
  [ "${#pids[@]}" -lt "$jobs" ] || wait_first
  fuzz_one "$target" &
  pids+=($!)
  names+=("$target")
done
while [ "${#pids[@]}" -gt 0 ]; do wait_first; done

for target in "${targets[@]}"; do
  echo "fuzz: $target"
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov: .* ft:" \
    "$build/fuzz-artifacts/$target.log" | tail -n 3
done
for target in "${failed[@]}"; do
  tail -n 60 "$build/fuzz-artifacts/$target.log" >&2
  echo "fuzz: $target FAILED (log $build/fuzz-artifacts/$target.log; the input is in" \
       "$build/fuzz-artifacts/$target-*). Once fixed, add the input to tests/fuzz/corpus/$target/." >&2
done
[ "${#failed[@]}" = 0 ] || exit 1
echo "fuzz: every target ran ${seconds}s without a finding"
