#!/usr/bin/env bash
# ctest cluster_two_nodes: a small redistribution on a virtual cluster of 2 nodes x 2 slots.
#   bench/cluster/two_nodes_test.sh PATH/TO/redist_bench
# Every rank first prints its host name and a variable passed with -x (then execs the bench in
# the same process), so the test sees that the 4 ranks sit on 2 distinct nodes, 2 each, and that
# -x crosses the launch agent's clean environment; redist_bench --size 200 --reps 1
# then compares redist against ScaLAPACK bitwise in every case and exits 1 on a mismatch.
# Exit 77 (ctest: skipped) with the reason when the machine cannot run the cluster.
set -euo pipefail
bench=${1:?usage: two_nodes_test.sh PATH/TO/redist_bench}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -x "$bench" ] || { echo "two_nodes_test: '$bench' is not an executable" >&2; exit 1; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# A name of this run's own ("ct" + PID) so that parallel ctest runs cannot clash; cluster.sh's
# own timeout (90 s) ends and tears down before ctest's (120 s) would kill it. It runs in the
# background so that a signal to this script reaches it at once (and it tears down).
"$here/cluster.sh" --nodes 2 --slots 2 --rate 1gbit --name "ct$$" --timeout 90 -- \
  -np 4 --tag-output -x CLUSTER_TEST_MARK=passed \
  sh -c 'echo "cluster-host: $(hostname) mark=${CLUSTER_TEST_MARK:-missing}"
         exec "$0" --size 200 --reps 1' "$bench" \
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
  echo "two_nodes_test: SKIPPED: $(grep -m1 'SKIP:' "$out" | sed 's/.*SKIP: //')"
  exit 77
fi
[ "$status" -eq 0 ] || { echo "two_nodes_test: FAILED: cluster.sh/mpirun exited $status"; exit 1; }

hosts=$(sed -n 's/.*cluster-host: \([^ ]*\).*/\1/p' "$out" | sort | uniq -c | awk '{print $2 "x" $1}' | xargs)
echo "two_nodes_test: ranks per host: $hosts"
[ "$(sed -n 's/.*cluster-host: \([^ ]*\).*/\1/p' "$out" | sort | uniq -c | awk '$1 == 2' | wc -l)" -eq 2 ] ||
  { echo "two_nodes_test: FAILED: expected 2 distinct hosts with 2 ranks each"; exit 1; }
[ "$(grep -c 'cluster-host: .* mark=passed' "$out")" -eq 4 ] ||
  { echo "two_nodes_test: FAILED: a variable given with -x did not reach every rank"; exit 1; }
! grep -q MISMATCH "$out" || { echo "two_nodes_test: FAILED: redist and ScaLAPACK differ"; exit 1; }
grep -q 'median ratio .* over [1-9][0-9]* cases' "$out" ||
  { echo "two_nodes_test: FAILED: redist_bench printed no summary"; exit 1; }
echo "two_nodes_test: OK: 4 ranks on 2 nodes, every case bitwise equal to ScaLAPACK"
