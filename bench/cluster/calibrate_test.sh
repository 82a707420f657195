#!/usr/bin/env bash
# ctest cluster_calibrate_nodes: redist_calibrate_nodes on a virtual cluster of 2 nodes x 2
# slots with 200 Mbit/s links (bench/cluster/cluster.sh): the CalibrateNodes test of
# tests/mpi/test_nodes.cpp, told with REDIST_TEST_EXPECT_NODES that the ranks span nodes, must
# find both levels, the same values on every rank and a correct plan on them; the measured
# inter-node beta must be within a factor 2 of the link's 1/(25 MB/s) = 4e-8 s/byte.
#   bench/cluster/calibrate_test.sh PATH/TO/redist_node_tests
# Exit 77 (ctest: skipped) with the reason when the machine cannot run the cluster.
set -euo pipefail
tests=${1:?usage: calibrate_test.sh PATH/TO/redist_node_tests}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -x "$tests" ] || { echo "calibrate_test: '$tests' is not an executable" >&2; exit 1; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$here/cluster.sh" --nodes 2 --slots 2 --rate 200mbit --name "cc$$" --timeout 90 -- \
  -np 4 -x REDIST_TEST_EXPECT_NODES=2 "$tests" --gtest_filter='CalibrateNodes.*' \
  >"$out" 2>&1 &
cluster=$!
trap 'kill -TERM "$cluster" 2>/dev/null; wait "$cluster"; cat "$out"; exit 143' TERM INT HUP
set +e
wait "$cluster"
status=$?
set -e
trap - TERM INT HUP
cat "$out"
if [ "$status" -eq 77 ]; then
  echo "calibrate_test: SKIPPED: $(grep -m1 'SKIP:' "$out" | sed 's/.*SKIP: //')"
  exit 77
fi
[ "$status" -eq 0 ] || { echo "calibrate_test: FAILED: cluster.sh/mpirun exited $status"; exit 1; }
grep -q 'PASSED  \] 1 test' "$out" || { echo "calibrate_test: FAILED: the test did not pass"; exit 1; }
beta=$(sed -n 's/.*inter [^ ]* s + \([^ ]*\) s\/byte (measured).*/\1/p' "$out" | head -1)
[ -n "$beta" ] || { echo "calibrate_test: FAILED: no inter-node level measured"; exit 1; }
awk -v b="$beta" 'BEGIN { exit !(b > 2e-8 && b < 8e-8) }' ||
  { echo "calibrate_test: FAILED: inter-node beta $beta s/byte, link 4e-8"; exit 1; }
echo "calibrate_test: OK: inter-node beta $beta s/byte on a 200 Mbit/s link (4e-8)"
