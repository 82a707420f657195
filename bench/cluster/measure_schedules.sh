#!/usr/bin/env bash
# The schedules measured on the virtual cluster (docs/studies/cluster.md): for every
# combination of nodes (NODES), ranks per node (SLOTS) and link rate (RATES), one cluster.sh run
# of schedule_bench (all-at-once, caterpillar, stepwise, GGP/OGGP with k = 1, 2, 4, auto with
# k = 2, multiphase on three cases, times next to the two-level and backbone models' predictions); then
# summarise_schedules.py writes the tables and the plot.
#
#   sudo bench/cluster/measure_schedules.sh BUILD_DIR OUT_DIR
# Environment: NODES (default "2 4"), SLOTS (default "1 2"), RATES (default "1gbit 200mbit"),
# SIZE (matrix order, default 1000), REPS (rounds, default 5), TIMEOUT (per run, default 300 s).
# Every cluster is torn down after its run, also on failure or Ctrl-C (cluster.sh's traps; this
# script passes the signal on and waits for them). Exit 77 where the cluster cannot run.
set -euo pipefail
build=${1:?usage: measure_schedules.sh BUILD_DIR OUT_DIR}
out=${2:?usage: measure_schedules.sh BUILD_DIR OUT_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench="$(cd "$build" && pwd)/bench/cluster/schedule_bench"
[ -x "$bench" ] || { echo "measure_schedules: no $bench (build the schedule_bench target)" >&2; exit 1; }
"$here/cluster.sh" --check || exit $?
mkdir -p "$out"
size=${SIZE:-1000}
reps=${REPS:-5}
child=
trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; [ -n "$child" ] && wait "$child"; exit 143' TERM INT HUP
{
  echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) cores (shared with other work), size $size, reps $reps"
} >"$out/runs.txt"
for rate in ${RATES:-1gbit 200mbit}; do
  for nodes in ${NODES:-2 4}; do
    for slots in ${SLOTS:-1 2}; do
      np=$((nodes * slots))
      label="${nodes}n${slots}r-$rate"
      echo "measure_schedules: $label ($np ranks)" >&2
      start=$(date +%s)
      "$here/cluster.sh" --nodes "$nodes" --slots "$slots" --rate "$rate" --name "ms$$" \
        --timeout "${TIMEOUT:-300}" -- -np "$np" "$bench" --size "$size" --reps "$reps" \
        --label "$label" >"$out/$label.csv" 2>"$out/$label.err" &
      child=$!
      set +e
      wait "$child"
      status=$?
      set -e
      child=
      echo "$label: exit $status, $(($(date +%s) - start)) s" >>"$out/runs.txt"
      [ "$status" -eq 0 ] || { echo "measure_schedules: $label failed ($status), see $out/$label.err" >&2; exit 1; }
    done
  done
done
python3 "$here/summarise_schedules.py" "$out"
