#!/usr/bin/env bash
# Every schedule side by side on the bench suite: for each REDIST_SCHEDULE value, the bench's
# medians (redist and ScaLAPACK in the same run), then one table per rank count with the time
# of each schedule, its ratio to ScaLAPACK and to all-at-once, and the median over the suite.
#
#   bench/schedules.sh BUILD_DIR [RANKS...]     (default ranks: 2 4)
# Environment: SIZE (matrix order, default 2000), REPS (default 5), SCHEDULES (default all),
# MAX_MEMORY (REDIST_MAX_MEMORY for every run, default unset).
set -euo pipefail
build=${1:?usage: bench/schedules.sh BUILD_DIR [RANKS...]}
shift
ranks=("${@:-2}")
[[ $# -eq 0 ]] && ranks=(2 4)
size=${SIZE:-2000}
reps=${REPS:-5}
schedules=(${SCHEDULES:-all-at-once caterpillar stepwise greedy circulant ggp oggp multiphase})
out=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export OMP_NUM_THREADS=1
for np in "${ranks[@]}"; do
  for s in "${schedules[@]}"; do
    REDIST_SCHEDULE=$s mpirun --oversubscribe -n "$np" -x REDIST_SCHEDULE ${MAX_MEMORY:+-x REDIST_MAX_MEMORY} \
      "$build/bench/redist_bench" --size "$size" --reps "$reps" --csv "$out/$np-$s.csv" >/dev/null
  done
  python3 - "$out" "$np" "${schedules[@]}" <<'PY'
import csv, statistics, sys
out, np, schedules = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = {s: list(csv.DictReader(open(f"{out}/{np}-{s}.csv"))) for s in schedules}
base = {(r["case"], r["type"]): float(r["redist_s"]) for r in runs[schedules[0]]}
print(f"\n{np} ranks: redist time per schedule (ms), x = ScaLAPACK / redist, a = {schedules[0]} / schedule")
print(f"{'case':<12}{'t':<3}" + "".join(f"{s:>22}" for s in schedules))
per = {s: ([], []) for s in schedules}
for row in runs[schedules[0]]:
    key = (row["case"], row["type"])
    line = f"{row['case']:<12}{row['type']:<3}"
    for s in schedules:
        r = next(x for x in runs[s] if (x["case"], x["type"]) == key)
        t, x, a = float(r["redist_s"]), float(r["ratio"]), base[key] / float(r["redist_s"])
        if r["check"] != "ok": line += f"{'CHECK ' + r['check']:>22}"; continue
        per[s][0].append(x); per[s][1].append(a)
        line += f"{t*1e3:9.2f} x{x:5.2f} a{a:4.2f}"
    print(line)
print(f"{'median':<15}" + "".join(f"{'':9} x{statistics.median(per[s][0]):5.2f} a{statistics.median(per[s][1]):4.2f}" for s in schedules))
PY
done
rm -rf "$out"
