#!/bin/sh
# The whole collective fault sweep (test_collective_faults.cpp) past hangs and crashes:
# runs redist_collective_fault_tests under mpirun; when a case hangs (the watchdog names it) or
# crashes, adds it to REDIST_COLL_FAULT_EXCLUDE and starts again; at the end lists the cases
# that hung or crashed and the failures of the last (complete) run.
#   tests/reliability/collective_fault_sweep.sh BUILD_DIR [NP] [GTEST_FILTER]
# Environment: SWEEP_CASE_TIMEOUT (seconds before a case counts as hung, default 6),
# REDIST_COLL_FAULT_CASE (as in the test), SWEEP_LOG_DIR (default: a new temporary directory).
set -u
build=${1:?usage: $0 BUILD_DIR [NP] [GTEST_FILTER]}
np=${2:-2}
filter=${3:-CollectiveFaults.*}
exe=$build/tests/reliability/redist_collective_fault_tests
logs=${SWEEP_LOG_DIR:-$(mktemp -d)}
mkdir -p "$logs"
exclude=${REDIST_COLL_FAULT_EXCLUDE:-}
stopped=""
round=0
while :; do
  round=$((round + 1))
  log=$logs/round$round.log
  REDIST_COLL_FAULT_EXCLUDE=$exclude REDIST_COLL_FAULT_VERBOSE=1 \
    REDIST_TEST_CASE_TIMEOUT=${SWEEP_CASE_TIMEOUT:-6} \
    timeout 900 mpirun -n "$np" "$exe" "--gtest_filter=$filter" >"$log" 2>&1
  rc=$?
  # The case that hung (the watchdog's replay line) or crashed.
  case_id=$(sed -n 's/.*CRASH: signal [0-9]* in REDIST_COLL_FAULT_CASE=\([^ ]*\).*/\1/p' "$log" | head -n 1)
  how=crash
  if [ -z "$case_id" ] && grep -q "TIMEOUT: no progress" "$log"; then
    case_id=$(grep -A 3 "TIMEOUT: no progress" "$log" | sed -n 's/.*replay: REDIST_COLL_FAULT_CASE=\([^ ]*\).*/\1/p' | head -n 1)
    how=hang
  fi
  if [ -z "$case_id" ] && [ "$rc" -ne 0 ] && ! grep -q "tests ran\|test suites ran" "$log"; then
    # Ended otherwise (an abort, MPI_ERRORS_ARE_FATAL): the last case announced.
    case_id=$(sed -n 's/^  \[\([^]]*\)\].*/\1/p' "$log" | tail -n 1)
    how="abnormal end (exit $rc)"
  fi
  if [ -z "$case_id" ]; then break; fi
  title=$(grep -F "[$case_id]" "$log" | head -n 1 | sed 's/^ *//')
  echo "STOPPED ($how): $title" | tee -a "$logs/stopped.txt"
  stopped="$stopped
$how: $title"
  exclude="${exclude:+$exclude,}$case_id"
done
echo
echo "== cases that hung or crashed (excluded from the last run):$stopped"
echo
echo "== the last run ($log):"
grep -E "^  [a-z]+: positions|FAILED [a-z]+/|^\[  (PASSED|FAILED) |tests? ran" "$log"
echo
echo "REDIST_COLL_FAULT_EXCLUDE=$exclude"
exit 0
