# Sourced by the test tiers (test.sh, test-extended.sh), with $root set to
# the checkout: each step is a timed stage, and the tier ends with every
# stage's wall time and the slowest tests of its ctest runs.
#
#   stage NAME COMMAND...    runs COMMAND and records its wall time under
#                            NAME; on failure prints the times so far and
#                            exits with COMMAND's status
#   run_ctest LOG DIR ARGS...  ctest ARGS run in DIR, its output also written
#                            to LOG for report_stages
#   report_stages TITLE      every stage's wall time, the tier's total, and
#                            the 10 slowest tests of each run_ctest log

stage_names=()
stage_seconds=()
stage_ctest_logs=()
stages_started=$SECONDS

stage() {
  local name=$1
  shift
  echo
  echo "== $name"
  local t0=$SECONDS rc=0
  "$@" || rc=$?
  stage_names+=("$name")
  stage_seconds+=($((SECONDS - t0)))
  if [ "$rc" != 0 ]; then
    echo "== $name FAILED (exit $rc)" >&2
    report_stages "stages until the failure"
    exit "$rc"
  fi
}

run_ctest() {
  local log=$1 dir=$2
  shift 2
  stage_ctest_logs+=("$log")
  mkdir -p "$(dirname "$log")"
  local rc=0
  (cd "$dir" && ctest "$@") 2>&1 | tee "$log" || rc=$?
  return "$rc"
}

format_seconds() {
  printf '%d min %02d s' $(($1 / 60)) $(($1 % 60))
}

cpu_family() {
  awk -F': ' '/^cpu family/ {print $2; exit}' /proc/cpuinfo
}

# The N slowest tests of a ctest log, one per line: "   12.3 s  name".
slowest_tests() {
  local log=$1 count=$2
  sed -nE 's/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: (.*[^ .]) \.+ *(\*\*\*)?[A-Za-z ]+ +([0-9.]+) sec.*$/\3\t\1/p' "$log" |
    sort -t "$(printf '\t')" -k1,1 -rn |
    awk -F '\t' -v count="$count" 'NR <= count {printf "  %7.1f s  %s\n", $1, $2}'
  # (awk reads to the end: with `head` the sort before it could die of
  # SIGPIPE, and pipefail would make that the tier's status.)
}

report_stages() {
  local title=$1 i log
  echo
  echo "== $title (cpu family $(cpu_family), $(nproc) CPUs)"
  for i in "${!stage_names[@]}"; do
    printf '  %-52s %s\n' "${stage_names[$i]}" "$(format_seconds "${stage_seconds[$i]}")"
  done
  printf '  %-52s %s\n' "total" "$(format_seconds $((SECONDS - stages_started)))"
  for log in "${stage_ctest_logs[@]}"; do
    [ -f "$log" ] || continue
    echo "  the 10 slowest tests of ${log#"$root"/}:"
    slowest_tests "$log" 10
  done
}
