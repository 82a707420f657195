#!/usr/bin/env bash
# CI job: valgrind memcheck on a few short MPI tests of the regular build (the one
# scripts/test.sh made: $REDIST_BUILD_DIR, default build/test), with Open MPI's suppressions
# and tests/reliability/valgrind.supp (third-party code only). Any memcheck error fails the
# job (--error-exitcode). Leaks are the sanitizer job's business (LeakSanitizer).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REDIST_EXTRA_PACKAGES="valgrind" source scripts/deps.sh
source scripts/ci-common.sh
build=${REDIST_BUILD_DIR:-build/test}
if [[ ! -x $build/tests/reliability/redist_resource_tests ]]; then
  ci_step "build ($build)"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREDIST_WERROR=ON >/dev/null
  cmake --build "$build" -j"$REDIST_JOBS"
fi
vg=(valgrind -q --error-exitcode=99 --leak-check=no --track-origins=no
    --suppressions=/usr/share/openmpi/openmpi-valgrind.supp
    --suppressions="$PWD/tests/reliability/valgrind.supp")
ci_step "valgrind memcheck: C API plans (oracle), 2 ranks"
ci_mpi 600 2 "${vg[@]}" "$build/tests/mpi/redist_mpi_tests" --gtest_filter='CApi.*' --cases=20
ci_step "valgrind memcheck: every error case of the C API and ScaLAPACK entries, 3 ranks"
ci_mpi 600 3 "${vg[@]}" "$build/tests/errors/redist_error_tests"
ci_step "valgrind memcheck: the progress thread of split executions (REDIST_PROGRESS), 2 ranks"
ci_mpi 300 2 "${vg[@]}" "$build/tests/reliability/redist_thread_tests" --gtest_filter='Progress*' \
  --cases=5
ci_step "valgrind memcheck: batches unpacked from the senders' mapped buffers, 2 ranks"
REDIST_SINGLE_COPY=mapped ci_mpi 300 2 "${vg[@]}" "$build/tests/mpi/redist_batch_tests" --cases=10
ci_step "valgrind memcheck: resource hygiene (300 ScaLAPACK-entry calls), 3 ranks"
ci_mpi 600 3 "${vg[@]}" "$build/tests/reliability/redist_resource_tests" --cases=300
ci_step "valgrind memcheck: N-d plans in two phases (darray oracle), 2 ranks"
ci_mpi 300 2 "${vg[@]}" "$build/tests/mpi/redist_nd_tests" --gtest_filter='NdPlan.TwoPhases*'
ci_step "valgrind memcheck: A and B in the same memory, 2 ranks"
ci_mpi 300 2 "${vg[@]}" "$build/tests/reliability/redist_overlap_tests"
ci_step "valgrind memcheck: block grids, first blocks and row-major arrays (oracles), 2 ranks"
ci_mpi 300 2 "${vg[@]}" "$build/tests/mpi/redist_grid_tests" --cases=20
REDIST_SINGLE_COPY=direct ci_mpi 300 2 "${vg[@]}" "$build/tests/mpi/redist_grid_tests" --cases=20
ci_mpi 300 2 "${vg[@]}" "$build/tests/mpi/redist_grid_batch_tests" --cases=10
ci_mpi 300 2 "${vg[@]}" "$build/tests/mpi/redist_capi_ext_tests" --cases=20
ci_step "valgrind memcheck: MPI errors injected during execution, 3 ranks"
# Not the out-of-memory case: under valgrind a failed operator new aborts instead of throwing.
# The sweep of every failing call at every position: one mode, all at once, process 0.
REDIST_FAULT_SWEEP=quick ci_mpi 300 3 "${vg[@]}" "$build/tests/reliability/redist_fault_tests" \
  --gtest_filter=-Faults.OutOfMemoryWhilePlanningIsAgreed
ci_step "valgrind memcheck: collective, communicator and attribute calls failing, 3 ranks"
ci_mpi 600 3 "${vg[@]}" "$build/tests/reliability/redist_collective_fault_tests"
ci_done
