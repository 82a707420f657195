# Sourced by the scripts/ci-*.sh jobs: step banners, timed MPI runs, the reliability tests.
# Every MPI run has a timeout: a hang fails the job instead of stalling CI.
ci_started=$SECONDS
ci_step() { printf '\n=== [%s, +%ds] %s\n' "$(basename "$0")" "$((SECONDS - ci_started))" "$*"; }
# ci_mpi TIMEOUT_SECONDS RANKS PROGRAM [ARGS...]
ci_mpi() {
  local limit=$1 ranks=$2
  shift 2
  echo "--- mpirun -n $ranks $* (timeout ${limit}s)"
  timeout --signal=TERM --kill-after=10 "$limit" \
    mpirun --oversubscribe -n "$ranks" "$@"
}
# ci_reliability_tests BUILD_DIR FLAVOUR: the tests of tests/reliability at small counts.
ci_reliability_tests() {
  local build=$1
  ci_step "reliability tests ($2)"
  ci_mpi 300 3 "$build/tests/reliability/redist_resource_tests" --cases=2000
  ci_mpi 300 2 "$build/tests/reliability/redist_thread_tests" --cases=10
  ci_mpi 120 2 "$build/tests/reliability/redist_overlap_tests"
  # Not the out-of-memory case: ASan aborts on an allocation that large instead of throwing.
  ci_mpi 300 3 "$build/tests/reliability/redist_fault_tests" \
    --gtest_filter=-Faults.OutOfMemoryWhilePlanningIsAgreed
  # Every collective, communicator and attribute call failing once (docs/reliability.md, Faults).
  ci_mpi 300 3 "$build/tests/reliability/redist_collective_fault_tests"
  # The soak's short version (docs/reliability.md, Soak): about 10 s under ASan's exact unwinder.
  REDIST_SOAK_FAULT_PERCENT=10 ci_mpi 300 4 "$build/tests/reliability/redist_soak_tests" --cases=300
  if [[ -x $build/tests/ilp64/redist_ilp64_tests ]]; then
    ci_mpi 120 3 "$build/tests/ilp64/redist_ilp64_tests" --cases=60
  fi
}
ci_done() { ci_step "done"; }
