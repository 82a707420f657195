#!/usr/bin/env bash
# CI job: AddressSanitizer + UndefinedBehaviorSanitizer (clang, every UBSan finding fatal)
# build of the library and the tests, then the unit tests and the MPI tests at reduced case
# counts, LeakSanitizer on (suppressions for Open MPI's and BLACS's own allocations in
# tests/reliability/lsan.supp). Also builds the libFuzzer target (scripts/ci-fuzz.sh runs it).
# Usage: scripts/ci-sanitize.sh        (build dir: $REDIST_SAN_BUILD_DIR, default build/sanitize)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REDIST_EXTRA_PACKAGES="clang libclang-rt-14-dev" source scripts/deps.sh
source scripts/ci-common.sh
build=${REDIST_SAN_BUILD_DIR:-build/sanitize}

ci_step "configure + build (clang, ASan + UBSan, libFuzzer target)"
# Only what this job and ci-fuzz.sh run (not the tools, the other examples, the ring tests),
# built as one target (redist_job): as separate goals, make builds them one after another.
targets=(redist_unit_tests redist_research_tests redist_layout_kinds_tests redist_fuzz_replay redist_fuzz_plan
         redist_mpi_tests redist_error_tests redist_error_fatal_tests redist_mpi_dropin_tests
         redist_demo redist_resource_tests redist_thread_tests redist_overlap_tests
         redist_fault_tests redist_collective_fault_tests redist_soak_tests redist_ilp64_tests
         redist_exec_tests redist_nd_tests redist_capi_ext_tests redist_relabel_tests redist_grid_tests
         redist_grid_batch_tests)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREDIST_WERROR=ON \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DREDIST_SANITIZE=ON -DREDIST_FUZZ=ON \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
  -DREDIST_BUILD_BENCH=OFF -DREDIST_BUILD_FORTRAN=OFF "-DREDIST_JOB_TARGETS=${targets[*]}" \
  >/dev/null
cmake --build "$build" -j"$REDIST_JOBS" --target redist_job

# The MPI runs unwind malloc stacks the slow, exact way (fast_unwind_on_malloc=0), so that
# allocations made inside Open MPI and BLACS (no frame pointers) are attributed to them and the
# suppressions match; the unit tests never enter those libraries and keep the fast unwinder
# (the exact one made them 5-10x slower: 400 s of the job).
asan_common=detect_leaks=1:abort_on_error=0
export ASAN_OPTIONS=fast_unwind_on_malloc=0:malloc_context_size=40:$asan_common
# use_tls=0: LeakSanitizer's tracer crashes reading the dynamic TLS of Open MPI's components
# ("Tracer caught signal 11"); without TLS as roots it can only report more, never less.
export LSAN_OPTIONS=suppressions=$PWD/tests/reliability/lsan.supp:print_suppressions=0:use_tls=0
export UBSAN_OPTIONS=print_stacktrace=1
# Keep Open MPI's components loaded until exit so that their leaks are attributed (and
# suppressed) by name.
export OMPI_MCA_mca_base_component_disable_dlclose=1

ci_step "unit tests and corpus replay (ctest -L unit)"
ASAN_OPTIONS=$asan_common ctest --test-dir "$build" -L unit -j"$REDIST_JOBS" --timeout 300 \
  --output-on-failure

ci_step "MPI tests at reduced case counts"
for np in 1 3 4; do
  ci_mpi 300 "$np" "$build/tests/mpi/redist_mpi_tests" --cases=60 --case-timeout=60
done
for np in 1 3 4; do
  ci_mpi 300 "$np" "$build/tests/errors/redist_error_tests"
done
ci_mpi 120 3 "$build/tests/errors/redist_error_fatal_tests"
# First blocks and row-major layouts through the C API (every single-copy way by turns), and the
# relabelling call.
for way in auto mapped; do
  REDIST_SINGLE_COPY=$way ci_mpi 300 3 "$build/tests/mpi/redist_capi_ext_tests" --cases=300 \
    --case-timeout=60
done
ci_mpi 120 3 "$build/tests/mpi/redist_relabel_tests" --cases=40 --case-timeout=60
for way in auto mapped direct; do
  REDIST_SINGLE_COPY=$way ci_mpi 300 3 "$build/tests/mpi/redist_grid_tests" --cases=100 \
    --case-timeout=60
done
ci_mpi 300 3 "$build/tests/mpi/redist_grid_batch_tests" --cases=40 --case-timeout=60
ci_mpi 120 3 "$build/tests/mpi/redist_mpi_dropin_tests"
# Packing interleaved with the local copy (Executor::pack_with_local_copy) on every plan that
# can take it, 2-D (sent) and N-d (packed for a mapped read).
REDIST_TEST_INTERLEAVING=200 ci_mpi 120 3 "$build/tests/mpi/redist_exec_tests" --cases=40 \
  --case-timeout=60 --gtest_filter=Executor.RandomTransfersExecutedRepeatedly
REDIST_TEST_INTERLEAVING=3000 REDIST_SINGLE_COPY=mapped ci_mpi 120 3 \
  "$build/tests/mpi/redist_nd_tests"
ci_mpi 120 4 "$build/examples/redist_demo"
ci_reliability_tests "$build" sanitize
ci_done
