#!/usr/bin/env bash
# CI job: run the libFuzzer target over the pure layers (tests/fuzz/fuzz_plan.cpp: every plan
# checked against brute-force enumeration) for a bounded time, starting from the checked-in
# corpus tests/fuzz/corpus. New inputs go to a scratch directory, not into the repository;
# a failing input is saved in the build directory and the job fails.
#   scripts/ci-fuzz.sh [seconds]     (default $REDIST_FUZZ_SECONDS or 60)
# To grow the checked-in corpus after a longer run:
#   build/sanitize/tests/fuzz/redist_fuzz_plan -merge=1 tests/fuzz/corpus <new inputs dir>
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REDIST_EXTRA_PACKAGES="clang libclang-rt-14-dev" source scripts/deps.sh
source scripts/ci-common.sh
build=${REDIST_SAN_BUILD_DIR:-build/sanitize}
seconds=${1:-${REDIST_FUZZ_SECONDS:-60}}
fuzzer=$build/tests/fuzz/redist_fuzz_plan
if [[ ! -x $fuzzer ]]; then
  ci_step "build the fuzz target ($build)"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREDIST_WERROR=ON \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DREDIST_SANITIZE=ON -DREDIST_FUZZ=ON \
    -DREDIST_BUILD_BENCH=OFF -DREDIST_BUILD_FORTRAN=OFF >/dev/null
  cmake --build "$build" -j"$REDIST_JOBS" --target redist_fuzz_plan
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$build/fuzz-artifacts"
ci_step "libFuzzer: ${seconds}s from $(ls tests/fuzz/corpus | wc -l) corpus inputs"
timeout --kill-after=10 $((seconds + 120)) "$fuzzer" -max_total_time="$seconds" -max_len=256 \
  -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$build/fuzz-artifacts/" "$scratch" tests/fuzz/corpus
ci_done
