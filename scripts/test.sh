#!/usr/bin/env bash
# Build redist (warnings are errors) and run the whole test suite through ctest:
# unit tests without MPI, MPI tests against ScaLAPACK under mpiexec, examples.
# Installs missing Debian packages first. Usage: scripts/test.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/deps.sh
build=${REDIST_BUILD_DIR:-build/test}
# Optimised, with line tables only (-g1): backtraces and valgrind keep file and line, and the
# build takes about a third less time than with full debug information.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREDIST_WERROR=ON \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  "-DCMAKE_Fortran_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
cmake --build "$build" -j"$REDIST_JOBS"
ctest --test-dir "$build" --output-on-failure -j"$REDIST_JOBS" --timeout 600 "$@"
