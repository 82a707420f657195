#!/usr/bin/env python3
"""Time against matrix size for redist and ScaLAPACK's PxGEMR2D, at 2 and 4 ranks.

Runs bench/redist_bench (both libraries in the same run, outputs compared bitwise) for each
matrix order and rank count, prints a markdown table of the medians and their ratio, and draws
one SVG plot (log-log, one panel per rank count). Python 3 standard library only.

    python3 bench/size_sweep.py --bench build/release/bench/redist_bench \
        --sizes 500,1000,2000,4000 --ranks 2,4 --case blocksize --reps 5
"""
import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from ring_study import Svg, log_log_panel  # noqa: E402  (the hand-written SVG writer shared by the studies)

SERIES = (("scalapack_s", "ScaLAPACK PxGEMR2D", "#d62728"), ("redist_s", "redist", "#1f77b4"),
          ("memcpy_s", "one memcpy of the busiest rank's bytes", "#7f7f7f"))


def run(bench, ranks, size, case, reps):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.csv")
        cmd = ["mpirun", "--oversubscribe", "-n", str(ranks), bench, "--size", str(size),
               "--reps", str(reps), "--case", case, "--csv", out]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0 or not os.path.exists(out):
            sys.exit(f"size_sweep.py: {' '.join(cmd)} failed ({done.returncode}):\n"
                     f"{done.stdout}{done.stderr}")
        rows = list(csv.DictReader(open(out)))
    if len(rows) != 1 or rows[0]["check"] != "ok":
        sys.exit(f"size_sweep.py: {case} at size {size} on {ranks} ranks: {rows}")
    return rows[0]


def plot(results, ranks_list, sizes, case, path):
    values = [float(r[c]) for r in results.values() for c, _, _ in SERIES if float(r[c]) > 0]
    ymin = 10 ** math.floor(math.log10(min(values)))
    ymax = 10 ** math.ceil(math.log10(max(values)))
    pw, ph, x0, y0 = 320, 280, 80, 60
    svg = Svg(x0 + len(ranks_list) * (pw + 70) + 20, y0 + ph + 110)
    svg.text(svg.w / 2, 22, f"bench case '{case}': time per call against matrix order "
             "(medians; max over ranks)", 13, "middle")
    for i, ranks in enumerate(ranks_list):
        sx, sy = log_log_panel(svg, x0 + i * (pw + 70), y0, pw, ph, sizes, ymin, ymax,
                               "matrix order N (N x N doubles)", "seconds", f"{ranks} ranks")
        for column, _, colour in SERIES:
            pts = [(sx(n), sy(float(results[(ranks, n)][column]))) for n in sizes
                   if float(results[(ranks, n)][column]) > 0]
            svg.polyline(pts, colour)
            for x, y in pts:
                svg.circle(x, y, 2.5, colour)
    for j, (_, label, colour) in enumerate(SERIES):
        lx0 = x0 + j * 230
        svg.line(lx0, y0 + ph + 70, lx0 + 25, y0 + ph + 70, colour, 3)
        svg.text(lx0 + 30, y0 + ph + 74, label, 12)
    svg.save(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bench", "redist_bench"))
    ap.add_argument("--sizes", default="500,1000,2000,4000")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--case", default="blocksize")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--svg", default=os.path.join(ROOT, "docs", "bench", "time_vs_size.svg"))
    args = ap.parse_args()
    if not os.access(args.bench, os.X_OK):
        sys.exit(f"size_sweep.py: --bench {args.bench}: not an executable; build the target "
                 "redist_bench")
    sizes = sorted(int(s) for s in args.sizes.split(","))
    ranks_list = [int(r) for r in args.ranks.split(",")]
    results = {(r, n): run(args.bench, r, n, args.case, args.reps)
               for r in ranks_list for n in sizes}
    print("| ranks | N | ScaLAPACK | redist | ratio | memcpy | bw |")
    print("|---|---|---|---|---|---|---|")
    for (r, n), row in sorted(results.items()):
        print(f"| {r} | {n:,} | {float(row['scalapack_s']) * 1e3:.2f} ms | "
              f"{float(row['redist_s']) * 1e3:.2f} ms | {float(row['ratio']):.2f} | "
              f"{float(row['memcpy_s']) * 1e3:.2f} ms | {float(row['bw_ratio']):.2f} |")
    os.makedirs(os.path.dirname(args.svg), exist_ok=True)
    plot(results, ranks_list, sizes, args.case, args.svg)
    print(f"plot: {os.path.relpath(args.svg, ROOT)}")


if __name__ == "__main__":
    main()
