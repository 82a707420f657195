#!/usr/bin/env bash
# The long soak (docs/reliability.md, "Soak"): redist_soak_tests at 4 ranks under a timeout.
# Usage: tests/reliability/soak.sh BUILD_DIR [CALLS (default 100000)] [TIMEOUT_S (default 3600)]
# Extra arguments after these go to the program (--seed=S, --verbose, --case=K, ...).
# Under ASan+UBSan use the sanitizer job's environment (scripts/ci-sanitize.sh), e.g.
#   ASAN_OPTIONS=fast_unwind_on_malloc=0:malloc_context_size=40:detect_leaks=1 \
#   LSAN_OPTIONS=suppressions=$PWD/tests/reliability/lsan.supp:use_tls=0 \
#   OMPI_MCA_mca_base_component_disable_dlclose=1 tests/reliability/soak.sh build/sanitize 20000
set -euo pipefail
build=${1:?usage: soak.sh BUILD_DIR [CALLS] [TIMEOUT_S] [ARGS...]}
calls=${2:-100000}
limit=${3:-3600}
shift $(( $# < 3 ? $# : 3 ))
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
time timeout --signal=TERM --kill-after=10 "$limit" \
  mpirun --oversubscribe -n 4 "$build/tests/reliability/redist_soak_tests" --cases="$calls" "$@"
