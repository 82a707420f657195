#!/usr/bin/env python3
"""Ring planner studies for docs/ring.md (Python standard library only).

Builds research/tools/ring_study.cpp with the planner (src/schedule/ring*.cpp), runs
  - gap:      the heuristic (non-light heterogeneous bidirectional rings) against Lemma 12 and
              System 6's integer optimum, on random instances;
  - section8: Renard, Robert & Vivien's Section 8 experiment as a simulation (rings of 8 and 32
              processors, 100 iterations, rebalancing every 0/50/20/10/5 iterations,
              computation-to-communication ratio 1..10), with mild speed changes and with
              changed speeds redrawn from the whole list;
writes the CSVs and SVG plots into docs/studies/ring/ and prints the summaries quoted in docs/ring.md.

  python3 scripts/ring_study.py [--instances N] [--platforms P] [--seed S] [--out DIR]
"""
import argparse
import csv
import io
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMES = [(0, "no rebalancing"), (50, "every 50"), (20, "every 20"), (10, "every 10"),
           (5, "every 5")]
COLOURS = ["#000000", "#1f77b4", "#2ca02c", "#ff7f0e", "#d62728"]


def build(tmp):
    exe = os.path.join(tmp, "ring_study")
    cxx = os.environ.get("CXX", "c++")
    schedule = os.path.join(ROOT, "src", "schedule")
    planner = sorted(os.path.join(schedule, f) for f in os.listdir(schedule)
                     if f.startswith("ring") and f.endswith(".cpp"))
    subprocess.run([cxx, "-std=c++20", "-O2", "-I" + schedule,
                    "-I" + os.path.join(ROOT, "src", "layout"),
                    os.path.join(ROOT, "research", "tools", "ring_study.cpp"), *planner, "-o", exe],
                   check=True)
    return exe


def run(exe, what, count, seed, noise=0.05, factor=0.0):
    out = subprocess.run([exe, what, str(count), str(seed), str(noise), str(factor)],
                         check=True, capture_output=True, text=True).stdout
    return out, list(csv.DictReader(io.StringIO(out)))


def quantile(sorted_values, q):
    i = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[i]


# --- SVG by hand -----------------------------------------------------------------------------

class Svg:
    def __init__(self, width, height):
        self.w, self.h, self.items = width, height, []

    def line(self, x1, y1, x2, y2, colour="#000", width=1, dash=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.items.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                          f'stroke="{colour}" stroke-width="{width}"{d}/>')

    def polyline(self, points, colour, width=2):
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        self.items.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" '
                          f'stroke-width="{width}"/>')

    def circle(self, x, y, r, colour):
        self.items.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{colour}"/>')

    def rect(self, x, y, w, h, colour):
        self.items.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
                          f'fill="{colour}"/>')

    def text(self, x, y, s, size=12, anchor="start", rotate=None):
        t = f' transform="rotate({rotate} {x:.1f} {y:.1f})"' if rotate is not None else ""
        s = s.replace("&", "&amp;").replace("<", "&lt;")
        self.items.append(f'<text x="{x:.1f}" y="{y:.1f}" font-family="sans-serif" '
                          f'font-size="{size}" text-anchor="{anchor}"{t}>{s}</text>')

    def save(self, path):
        with open(path, "w") as f:
            f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.w}" '
                    f'height="{self.h}" viewBox="0 0 {self.w} {self.h}">\n')
            f.write(f'<rect width="{self.w}" height="{self.h}" fill="white"/>\n')
            f.write("\n".join(self.items))
            f.write("\n</svg>\n")


def log_log_panel(svg, px, y0, w, h, xticks, ymin, ymax, xlabel, ylabel, title):
    """Axes of a log-log panel at (px, y0): x ticks at `xticks`, a grid line per decade from
    ymin to ymax (powers of ten). Returns the maps (sx, sy) from data to picture."""
    lx0, lx1 = math.log10(xticks[0]), math.log10(xticks[-1])
    sx = lambda x: px + (math.log10(x) - lx0) / max(lx1 - lx0, 1e-9) * w
    sy = lambda y: y0 + h - (math.log10(y) - math.log10(ymin)) / (
        math.log10(ymax) - math.log10(ymin)) * h
    svg.line(px, y0 + h, px + w, y0 + h)
    svg.line(px, y0, px, y0 + h)
    for x in xticks:
        svg.line(sx(x), y0 + h, sx(x), y0 + h + 4)
        svg.text(sx(x), y0 + h + 17, f"{x:,}", 11, "middle")
    for e in range(round(math.log10(ymin)), round(math.log10(ymax)) + 1):
        svg.line(px - 4, sy(10.0 ** e), px + w, sy(10.0 ** e), "#ddd")
        svg.text(px - 7, sy(10.0 ** e) + 4, f"1e{e}", 11, "end")
    svg.text(px + w / 2, y0 + h + 36, xlabel, 12, "middle")
    svg.text(px - 52, y0 + h / 2, ylabel, 12, "middle", rotate=-90)
    svg.text(px + w / 2, y0 - 10, title, 13, "middle")
    return sx, sy


def axes(svg, x0, y0, w, h, xmin, xmax, ymin, ymax, xticks, yticks, xlabel, ylabel, title):
    sx = lambda x: x0 + (x - xmin) / (xmax - xmin) * w
    sy = lambda y: y0 + h - (y - ymin) / (ymax - ymin) * h
    svg.line(x0, y0 + h, x0 + w, y0 + h)
    svg.line(x0, y0, x0, y0 + h)
    for x in xticks:
        svg.line(sx(x), y0 + h, sx(x), y0 + h + 4)
        svg.text(sx(x), y0 + h + 17, f"{x:g}", 11, "middle")
    for y in yticks:
        svg.line(x0 - 4, sy(y), x0 + w, sy(y), "#ddd")
        svg.text(x0 - 7, sy(y) + 4, f"{y:.2f}", 11, "end")
    svg.text(x0 + w / 2, y0 + h + 36, xlabel, 12, "middle")
    svg.text(x0 - 48, y0 + h / 2, ylabel, 12, "middle", rotate=-90)
    svg.text(x0 + w / 2, y0 - 10, title, 13, "middle")
    return sx, sy


def plot_section8(rows, path, model):
    # Normalized per platform by its own time without rebalancing, then averaged.
    table = {}
    for r in rows:
        table[(int(r["n"]), int(r["ratio"]), int(r["period"]), int(r["platform"]))] = float(
            r["total"])
    sizes = sorted({k[0] for k in table})
    ratios = sorted({k[1] for k in table})
    platforms = sorted({k[3] for k in table})
    means = {}
    for n in sizes:
        for ratio in ratios:
            for period, _ in SCHEMES:
                means[(n, ratio, period)] = statistics.mean(
                    table[(n, ratio, period, p)] / table[(n, ratio, 0, p)] for p in platforms)
    ymin = min(means.values())
    ymax = max(means.values())
    step = 0.1 if ymax - ymin <= 1.0 else 0.2
    ymin = max(0.0, step * int(ymin / step - 1e-9))
    ymax = step * (int(ymax / step - 1e-9) + 1)
    yticks = [ymin + i * step for i in range(int(round((ymax - ymin) / step)) + 1)]
    svg = Svg(900, 440)
    svg.text(450, 16, "Section 8 simulated: " + model, 13, "middle")
    for i, n in enumerate(sizes):
        sx, sy = axes(svg, 80 + i * 420, 50, 320, 300, ratios[0], ratios[-1], ymin, ymax, ratios,
                      yticks, "computation-to-communication ratio",
                      "normalized execution time", f"ring of {n} processors")
        for (period, name), colour in zip(SCHEMES, COLOURS):
            pts = [(sx(r), sy(means[(n, r, period)])) for r in ratios]
            svg.polyline(pts, colour)
            for x, y in pts:
                svg.circle(x, y, 2.5, colour)
    for j, ((period, name), colour) in enumerate(zip(SCHEMES, COLOURS)):
        svg.line(120 + j * 150, 425, 145 + j * 150, 425, colour, 3)
        svg.text(150 + j * 150, 429, name, 12)
    svg.save(path)
    return means, sizes, ratios


def plot_gap(values, path, label):
    bins = [1.0, 1.02, 1.05, 1.1, 1.2, 1.3, 1.5, 2.0, 3.0]
    counts = [0] * len(bins)
    for v in values:
        if v <= 1.0 + 1e-12:
            counts[0] += 1
            continue
        for i in range(1, len(bins)):
            if v <= bins[i] + 1e-12:
                counts[i] += 1
                break
        else:
            counts[-1] += 1
    labels = ["= 1"] + [f"({bins[i - 1]:g}, {bins[i]:g}]" for i in range(1, len(bins) - 1)] + [
        f"> {bins[-2]:g}"]
    svg = Svg(760, 360)
    x0, y0, w, h = 70, 40, 660, 250
    top = max(counts)
    svg.line(x0, y0 + h, x0 + w, y0 + h)
    svg.line(x0, y0, x0, y0 + h)
    bw = w / len(counts)
    for i, c in enumerate(counts):
        bh = h * c / top if top else 0
        svg.rect(x0 + i * bw + 6, y0 + h - bh, bw - 12, bh, "#1f77b4")
        svg.text(x0 + i * bw + bw / 2, y0 + h - bh - 5, str(c), 11, "middle")
        svg.text(x0 + i * bw + bw / 2, y0 + h + 17, labels[i], 11, "middle")
    svg.text(x0 + w / 2, y0 + h + 40, label, 12, "middle")
    svg.text(x0 - 45, y0 + h / 2, "instances", 12, "middle", rotate=-90)
    svg.text(x0 + w / 2, y0 - 12,
             f"non-light heterogeneous bidirectional rings ({len(values)} random instances)",
             13, "middle")
    svg.save(path)
    return counts, labels


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=5000)
    ap.add_argument("--platforms", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--noise", type=float, default=0.05,
                    help="relative error of the speed measurements (section8)")
    ap.add_argument("--factor", type=float, default=1.5,
                    help="section8: a speed change multiplies the speed by a random factor in "
                         "[1/F, F]; a second run redraws changed speeds from the whole list")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "studies", "ring"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp)
        gap_csv, gap = run(exe, "gap", args.instances, args.seed)
        s8_runs = [("section8", f"speed changes by a factor in [1/{args.factor:g}, "
                                f"{args.factor:g}]", run(exe, "section8", args.platforms,
                                                        args.seed, args.noise, args.factor)),
                   ("section8-redraw", "changed speeds redrawn from the list (up to 10x)",
                    run(exe, "section8", args.platforms, args.seed, args.noise, 0.0))]
    with open(os.path.join(args.out, "gap.csv"), "w") as f:
        f.write(gap_csv)
    for name, _, (text, _) in s8_runs:
        with open(os.path.join(args.out, name + ".csv"), "w") as f:
            f.write(text)

    vs12 = sorted(float(r["time"]) / float(r["lemma12"]) for r in gap)
    vs6 = sorted(float(r["time"]) / float(r["system6"]) for r in gap)
    s6_12 = sorted(float(r["system6"]) / float(r["lemma12"]) for r in gap)
    light_exists = [r for r in gap if float(r["system12"]) >= 0]
    better12 = [r for r in light_exists if float(r["time"]) < float(r["system12"]) - 1e-9]
    complete = sum(int(r["complete"]) for r in gap)
    worst = max(gap, key=lambda r: float(r["time"]) / float(r["lemma12"]))
    counts, labels = plot_gap(vs12, os.path.join(args.out, "gap.svg"),
                              "heuristic time / Lemma 12 bound")
    print(f"gap: {len(gap)} non-light instances (seed {args.seed})")
    for name, v in [("time / Lemma 12", vs12), ("time / System 6 integer optimum", vs6),
                    ("System 6 / Lemma 12", s6_12)]:
        at = sum(1 for x in v if x <= 1 + 1e-12)
        print(f"  {name}: at the bound {at} ({100 * at / len(v):.1f}%), median "
              f"{quantile(v, 0.5):.4f}, 90% {quantile(v, 0.9):.4f}, 99% {quantile(v, 0.99):.4f}, "
              f"mean {statistics.mean(v):.4f}, worst {v[-1]:.4f}")
    print(f"  histogram of time / Lemma 12: " +
          ", ".join(f"{l}: {c}" for l, c in zip(labels, counts)))
    print(f"  worst: n={worst['n']} moved={worst['moved']} time={worst['time']} "
          f"lemma12={worst['lemma12']} system6={worst['system6']}")
    print(f"  a light flow exists (System 12 feasible) in {len(light_exists)}; the heuristic "
          f"beats System 12 in {len(better12)} of them; search completed in {complete}")

    for name, model, (_, s8) in s8_runs:
        means, sizes, ratios = plot_section8(s8, os.path.join(args.out, name + ".svg"), model)
        heur = sum(int(r["heuristic"]) for r in s8)
        reb = sum(int(r["rebalances"]) for r in s8)
        print(f"{name}: {model}; {args.platforms} platforms per ring size (seed {args.seed}, "
              f"speed measurement noise {args.noise:g}); {reb} rebalances planned, {heur} of "
              f"them not light (heuristic)")
        for n in sizes:
            print(f"  ring of {n}: normalized execution time (mean over platforms)")
            print("    ratio " + " ".join(f"{nm:>15}" for _, nm in SCHEMES) + "   best")
            for r in ratios:
                vals = [means[(n, r, p)] for p, _ in SCHEMES]
                best = SCHEMES[vals.index(min(vals))][1]
                print(f"    {r:5d} " + " ".join(f"{v:15.3f}" for v in vals) + f"   {best}")
    print(f"wrote {args.out}/: gap.csv gap.svg " +
          " ".join(f"{name}.csv {name}.svg" for name, _, _ in s8_runs))


if __name__ == "__main__":
    sys.exit(main())
