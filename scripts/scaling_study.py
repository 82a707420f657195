#!/usr/bin/env python3
"""Schedules at scale, for docs/studies/scaling.md (Python standard library only).

Runs research/tools/scaling_study.cpp (build it first: cmake --build BUILD --target scaling-study)
on
  - Park, Prasanna & Raghavendra's examples (Evers 2025 review, Table 4.19: (P, Q, k) = (18, 76, 8),
    (30, 66, 15), (46, 50, 25)), CYCLIC(1) -> CYCLIC(k), at the smallest and the largest array
    of their experiments (808,704 and 14,174,980 elements), plus (18, 76, 9);
  - P = Q = 1,024 ... 65,536 with ScaLAPACK block sizes 64 -> 128, 64 -> 100 and 48 -> 80,
    64 Ki elements (512 KiB) per process;
writes the tables into docs/studies/scaling.md between the markers below and the plot
docs/studies/scaling/predicted_time.svg.

  python3 scripts/scaling_study.py --exe BUILD/research/scaling-study [--max-procs N]
      [--matching-max N] [--doc FILE] [--svg FILE]
"""
import argparse
import csv
import io
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ring_study import Svg, log_log_panel  # noqa: E402  (the hand-written SVG writer shared by the studies)

BEGIN = "<!-- scaling_study.py: begin (generated, do not edit) -->"
END = "<!-- scaling_study.py: end -->"
PARK = [(18, 76, 8), (30, 66, 15), (46, 50, 25), (18, 76, 9)]
PARK_EXTENTS = [808704, 14174980]
MACHINE_PROCS = [1024, 4096, 16384, 65536]
MACHINE_BLOCKS = [(64, 128), (64, 100), (48, 80)]
PER_PROCESS = 65536
STRATEGIES = ["caterpillar", "stepwise", "circulant", "all-at-once"]
COLOURS = {"caterpillar": "#d62728", "stepwise": "#1f77b4", "circulant": "#2ca02c",
           "all-at-once": "#000000"}


def run(exe, cases, matching_max):
    args = [exe, "--matching-max", str(matching_max)]
    for c in cases:
        args += ["--case", ",".join(str(x) for x in c)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out), delimiter="\t"))


def key(row):
    return tuple(int(row[k]) for k in ("P", "Q", "r", "s", "extent"))


def by_case(rows):
    table = {}
    for r in rows:
        table.setdefault(key(r), {})[r["strategy"]] = r
    return table


def has_numbers(row):
    return row is not None and row["steps"] != "-"


def ms(row, column):
    return f"{1e3 * float(row[column]):.4g}" if has_numbers(row) else "-"


def intf(x):
    return f"{int(x):,}"


def park_table(table):
    lines = ["| P | Q | k | elements | torus | caterpillar N | circulant N | N ratio | "
             "caterpillar T | circulant T | T ratio | crossbar ms: caterpillar / circulant / "
             "all-at-once | torus ms: caterpillar / circulant / all-at-once |",
             "|---" * 13 + "|"]
    for (P, Q, r, s, extent), rows in table.items():
        cat, circ, all_ = rows["caterpillar"], rows["circulant"], rows["all-at-once"]
        n_ratio = int(cat["steps"]) / int(circ["steps"])
        t_ratio = int(cat["sum_step_max"]) / int(circ["sum_step_max"])
        lines.append(
            f"| {P} | {Q} | {s} | {intf(extent)} | {cat['torus_k']}^3 | {cat['steps']} | "
            f"{circ['steps']} | {n_ratio:.2f} | {intf(cat['sum_step_max'])} | "
            f"{intf(circ['sum_step_max'])} | {t_ratio:.2f} | "
            f"{ms(cat, 'crossbar_seconds')} / {ms(circ, 'crossbar_seconds')} / "
            f"{ms(all_, 'crossbar_seconds')} | {ms(cat, 'torus_seconds')} / "
            f"{ms(circ, 'torus_seconds')} / {ms(all_, 'torus_seconds')} |")
    return lines


def machine_table(table):
    lines = ["| P = Q | r -> s | torus | messages | strategy | form | N | T (elements) | "
             "largest | crossbar ms | torus link bytes (sum of step maxima) | torus ms | "
             "compute s |", "|---" * 13 + "|"]
    for (P, Q, r, s, extent), rows in table.items():
        for name in STRATEGIES:
            row = rows[name]
            if not has_numbers(row):
                lines.append(f"| {intf(P)} | {r} -> {s} | {row['torus_k']}^3 | "
                             f"{intf(row['messages'])} | {name} | {row['form']} | - | - | - | - | "
                             f"- | - | - |")
                continue
            lines.append(
                f"| {intf(P)} | {r} -> {s} | {row['torus_k']}^3 | {intf(row['messages'])} | "
                f"{name} | {row['form']} | {intf(row['steps'])} | {intf(row['sum_step_max'])} | "
                f"{intf(row['largest_piece'])} | {ms(row, 'crossbar_seconds')} | "
                f"{float(row['torus_link_sum_step_max']):,.0f} | {ms(row, 'torus_seconds')} | "
                f"{float(row['compute_seconds']):.3g} |")
    return lines


def plot(table, path):
    """Predicted time against P, log-log: one panel per block pair, crossbar solid, torus dashed."""
    procs = sorted({k[0] for k in table})
    values = [float(row[c]) for rows in table.values() for row in rows.values()
              if has_numbers(row) for c in ("crossbar_seconds", "torus_seconds")]
    ymin = 10 ** math.floor(math.log10(min(values)))
    ymax = 10 ** math.ceil(math.log10(max(values)))
    panels = MACHINE_BLOCKS
    pw, ph, x0, y0 = 300, 300, 80, 60
    svg = Svg(x0 + len(panels) * (pw + 60) + 20, y0 + ph + 110)
    svg.text(svg.w / 2, 22, f"Predicted time of a 1-D redistribution, P = Q, {PER_PROCESS:,} "
             "elements of 8 bytes per process (solid: crossbar, dashed: 3-D torus)", 13,
             "middle")
    for i, (r, s) in enumerate(panels):
        px = x0 + i * (pw + 60)
        sx, sy = log_log_panel(svg, px, y0, pw, ph, procs, ymin, ymax, "P = Q (processes)",
                               "predicted seconds", f"CYCLIC({r}) -> CYCLIC({s})")
        for name in STRATEGIES:
            for column, dash in (("crossbar_seconds", None), ("torus_seconds", "6,4")):
                pts = [(sx(k[0]), sy(float(rows[name][column])))
                       for k, rows in sorted(table.items())
                       if k[2:4] == (r, s) and has_numbers(rows[name])]
                if len(pts) > 1:
                    svg.items.append(
                        '<polyline points="' + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts) +
                        f'" fill="none" stroke="{COLOURS[name]}" stroke-width="2"' +
                        (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
                for x, y in pts:
                    svg.circle(x, y, 2.5, COLOURS[name])
    for j, name in enumerate(STRATEGIES):
        lx0 = x0 + j * 170
        svg.line(lx0, y0 + ph + 70, lx0 + 25, y0 + ph + 70, COLOURS[name], 3)
        svg.text(lx0 + 30, y0 + ph + 74, name, 12)
    svg.text(x0, y0 + ph + 98, "Lines that coincide hide each other: stepwise is circulant or "
             "W&O where they apply; missing points were not computed (see the table).", 11)
    svg.save(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", default=os.path.join(ROOT, "build", "research", "scaling-study"))
    ap.add_argument("--max-procs", type=int, default=MACHINE_PROCS[-1])
    ap.add_argument("--matching-max", type=int, default=4096,
                    help="stepwise matchings (no closed form) up to this many processes")
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "studies", "scaling.md"))
    ap.add_argument("--svg", default=os.path.join(ROOT, "docs", "studies", "scaling",
                                                  "predicted_time.svg"))
    args = ap.parse_args()
    if not os.access(args.exe, os.X_OK):
        sys.exit(f"scaling_study.py: --exe {args.exe}: not an executable; build it with "
                 "cmake --build BUILD --target scaling-study")
    started = time.monotonic()
    park = by_case(run(args.exe, [(P, Q, 1, k, n) for P, Q, k in PARK for n in PARK_EXTENTS],
                       args.matching_max))
    machine = by_case(run(args.exe, [(P, P, r, s, PER_PROCESS * P) for r, s in MACHINE_BLOCKS
                                     for P in MACHINE_PROCS if P <= args.max_procs],
                          args.matching_max))
    elapsed = time.monotonic() - started
    os.makedirs(os.path.dirname(args.svg), exist_ok=True)
    plot(machine, args.svg)

    generated = [BEGIN, "",
                 f"Generated by `python3 scripts/scaling_study.py --matching-max "
                 f"{args.matching_max}` ({elapsed:.0f} s on the shared 2-core machine).", "",
                 "(a) Park et al.'s examples, CYCLIC(1) on P -> CYCLIC(k) on Q other processes:",
                 ""] + park_table(park) + [
                 "", f"(b) P = Q processes, {PER_PROCESS:,} elements per process, CYCLIC(r) -> "
                 "CYCLIC(s) on other processes:", ""] + machine_table(machine) + [
                 "", f"![predicted time against P]({os.path.relpath(args.svg, os.path.dirname(args.doc))})",
                 "", END]
    with open(args.doc) as f:
        doc = f.read()
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + "\n".join(generated) + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + "\n".join(generated) + "\n"
    with open(args.doc, "w") as f:
        f.write(doc)
    print(f"wrote {args.doc} and {args.svg} ({elapsed:.0f} s)")


if __name__ == "__main__":
    sys.exit(main())
