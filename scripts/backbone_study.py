#!/usr/bin/env python3
"""Backbone study for docs/studies/backbone.md (Python standard library only).

Runs research/tools/backbone_study.cpp (Jeannot & Wagner's Sec. 5.1 simulations):
  - k from 1 to 20 on the same random graphs, weights 1..20 and 1..10000, beta = 1;
  - beta from 0.1 to 100 on random graphs with weights 1..20, each with its own random k;
  - processor seconds per GGP / OGGP call on complete graphs up to 100 x 100;
checks every row (costs at least the lower bound, all-at-once at least its own bound), writes
summary CSVs and SVG plots into docs/studies/backbone/ and the tables into docs/studies/backbone.md, between its
markers.

  python3 scripts/backbone_study.py [--exe PATH] [--graphs N] [--seed S] [--out DIR] [--doc FILE]
                                     [--quick]

Without --exe the program is compiled with $CXX (default c++) from research/tools/backbone_study.cpp
and the sources of the pure layers and the models (src/layout, src/schedule, research/model).
--quick runs a tiny setting (seconds) and writes only into --out: the ctest backbone_study_quick.
"""
import argparse
import collections
import csv
import io
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import xml.dom.minidom

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ring_study  # noqa: E402  (its Svg: the hand-written SVG writer shared by the studies)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSTANCE_COLUMNS = ["graph", "senders", "receivers", "messages", "max_degree", "total",
                    "max_node", "k", "beta", "lower_bound", "ggp_cost", "oggp_cost",
                    "all_at_once_cost", "ggp_steps", "oggp_steps", "bound_steps", "ggp_seconds",
                    "oggp_seconds"]
TIMING_COLUMNS = ["senders", "receivers", "messages", "max_weight", "k", "ggp_seconds",
                  "oggp_seconds", "ggp_steps", "oggp_steps"]
SIZE_BINS = [(1, 10), (10, 50), (50, 150), (150, 401)]
BETA_SCALE = 10  # elements per weight unit in the beta sweep, so beta may be 0.1
BEGIN = "<!-- backbone_study.py: begin (generated, do not edit) -->"
END = "<!-- backbone_study.py: end -->"
COLOURS = {"GGP": "#d62728", "OGGP": "#1f77b4", "all-at-once": "#2ca02c"}


def build(tmp):
    layers = [os.path.join(ROOT, *layer) for layer in
              (("src", "layout"), ("src", "schedule"), ("research", "model"))]
    files = sorted(os.path.join(d, f) for d in layers for f in os.listdir(d) if f.endswith(".cpp"))
    exe = os.path.join(tmp, "backbone_study")
    cxx = os.environ.get("CXX", "c++")
    study = os.path.join(ROOT, "research", "tools", "backbone_study.cpp")
    subprocess.run([cxx, "-std=c++20", "-O2", *("-I" + d for d in layers), study, *files,
                    "-o", exe], check=True)
    return exe


def run(exe, args, columns):
    out = subprocess.run([exe, *args], check=True, capture_output=True, text=True).stdout
    reader = csv.DictReader(io.StringIO(out))
    if reader.fieldnames != columns:
        sys.exit(f"backbone_study {args[0]}: header {reader.fieldnames}, expected {columns}")
    rows = []
    for line, r in enumerate(reader, start=2):
        try:
            rows.append({c: float(r[c]) for c in columns})
        except (TypeError, ValueError):
            sys.exit(f"backbone_study {args[0]}: line {line} is not all numbers: {r}")
    return rows


def check(rows, what):
    """The model's guarantees, row by row: nothing beats the lower bound, and all-at-once pays
    one setup on top of max(W, P / k) = lower bound - beta * fewest steps."""
    for r in rows:
        bound = r["lower_bound"]
        for name in ("ggp_cost", "oggp_cost"):
            if r[name] < bound * (1 - 1e-12):
                sys.exit(f"{what}: {name} {r[name]} below the lower bound {bound}: {r}")
        if r["ggp_steps"] < r["bound_steps"] or r["oggp_steps"] < r["bound_steps"]:
            sys.exit(f"{what}: fewer steps than max(Delta, ceil(m / k)): {r}")
        fluid_floor = r["beta"] + bound - r["beta"] * r["bound_steps"]
        if r["all_at_once_cost"] < fluid_floor * (1 - 1e-9):
            sys.exit(f"{what}: all-at-once {r['all_at_once_cost']} below {fluid_floor}: {r}")


def summarise(rows):
    ggp = [r["ggp_cost"] / r["lower_bound"] for r in rows]
    oggp = [r["oggp_cost"] / r["lower_bound"] for r in rows]
    aao = [r["all_at_once_cost"] / r["lower_bound"] for r in rows]
    oggp_vs_aao = [r["oggp_cost"] / r["all_at_once_cost"] for r in rows]
    return collections.OrderedDict([
        ("graphs", len(rows)),
        ("ggp_worst", max(ggp)), ("ggp_mean", statistics.mean(ggp)),
        ("oggp_worst", max(oggp)), ("oggp_mean", statistics.mean(oggp)),
        ("ggp_steps", statistics.mean(r["ggp_steps"] for r in rows)),
        ("oggp_steps", statistics.mean(r["oggp_steps"] for r in rows)),
        ("fewest_steps", statistics.mean(r["bound_steps"] for r in rows)),
        ("aao_mean", statistics.mean(aao)), ("aao_worst", max(aao)),
        ("oggp_over_aao_mean", statistics.mean(oggp_vs_aao)),
        ("oggp_over_aao_worst", max(oggp_vs_aao)),
        ("aao_cheaper_percent", 100.0 * sum(1 for v in oggp_vs_aao if v > 1) / len(rows)),
        ("ggp_ms_max", 1000 * max(r["ggp_seconds"] for r in rows)),
        ("oggp_ms_max", 1000 * max(r["oggp_seconds"] for r in rows)),
    ])


def grouped(rows, key):
    groups = collections.OrderedDict()
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    return collections.OrderedDict((k, summarise(v)) for k, v in groups.items())


def write_csv(path, label, table):
    with open(path, "w") as f:
        fields = next(iter(table.values())).keys()
        f.write(label + "," + ",".join(fields) + "\n")
        for k, s in table.items():
            f.write(f"{k:g}," + ",".join(f"{v:.6g}" for v in s.values()) + "\n")


def markdown_ratio_table(label, table):
    lines = [f"| {label} | GGP worst | GGP mean | OGGP worst | OGGP mean | GGP steps | OGGP steps "
             "| fewest steps | all-at-once / bound | OGGP / all-at-once | all-at-once cheaper |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k, s in table.items():
        lines.append(f"| {k:g} | {s['ggp_worst']:.4f} | {s['ggp_mean']:.4f} | "
                     f"{s['oggp_worst']:.4f} | {s['oggp_mean']:.4f} | {s['ggp_steps']:.1f} | "
                     f"{s['oggp_steps']:.1f} | {s['fewest_steps']:.1f} | {s['aao_mean']:.4f} | "
                     f"{s['oggp_over_aao_mean']:.4f} | {s['aao_cheaper_percent']:.0f}% |")
    return "\n".join(lines)


def markdown_size_table(title, rows):
    lines = [f"| {title}: messages | instances | GGP worst | GGP mean | OGGP worst | OGGP mean |",
             "|---|---:|---:|---:|---:|---:|"]
    for lo, hi in SIZE_BINS:
        part = [r for r in rows if lo <= r["messages"] < hi]
        if part:
            s = summarise(part)
            lines.append(f"| {lo}..{hi - 1} | {len(part)} | {s['ggp_worst']:.4f} | "
                         f"{s['ggp_mean']:.4f} | {s['oggp_worst']:.4f} | {s['oggp_mean']:.4f} |")
    return "\n".join(lines)


def markdown_timing_table(rows):
    lines = ["| graph | messages | weights | k | GGP ms | OGGP ms | GGP steps | OGGP steps |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {int(r['senders'])} x {int(r['receivers'])} | {int(r['messages'])} | "
                     f"1..{int(r['max_weight'])} | {int(r['k'])} | {1000 * r['ggp_seconds']:.1f} | "
                     f"{1000 * r['oggp_seconds']:.1f} | {int(r['ggp_steps'])} | "
                     f"{int(r['oggp_steps'])} |")
    return "\n".join(lines)


# --- plots, with the hand-written SVG writer shared by the studies -------------------------

class Svg(ring_study.Svg):
    def dashed_polyline(self, points, colour, dash, width=2):
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        self.items.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" '
                          f'stroke-width="{width}" stroke-dasharray="{dash}"/>')


def nice_step(span):
    for step in (0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5):
        if span / step <= 8:
            return step
    return 1.0


def panel(svg, x0, y0, w, h, series, xs, title, xlabel, log_x=False, ylabel="cost / lower bound"):
    """series: list of (name, colour, dash, [y per x])."""
    fx = (lambda x: math.log10(x)) if log_x else (lambda x: x)
    ys = [y for _, _, _, values in series for y in values]
    ymin, ymax = min(ys), max(ys)
    step = nice_step(max(ymax - ymin, 1e-6))
    ymin = step * math.floor(ymin / step - 1e-9)
    ymax = step * math.ceil(ymax / step + 1e-9)
    sx = lambda x: x0 + (fx(x) - fx(xs[0])) / (fx(xs[-1]) - fx(xs[0])) * w
    sy = lambda y: y0 + h - (y - ymin) / (ymax - ymin) * h
    svg.line(x0, y0 + h, x0 + w, y0 + h)
    svg.line(x0, y0, x0, y0 + h)
    last = None
    for x in xs:  # a tick label where it does not touch the previous one
        if last is None or sx(x) - last >= 24:
            svg.line(sx(x), y0 + h, sx(x), y0 + h + 4)
            svg.text(sx(x), y0 + h + 17, f"{x:g}", 10, "middle")
            last = sx(x)
    digits = max(0, -int(math.floor(math.log10(step))))
    y = ymin
    while y <= ymax + step / 2:
        svg.line(x0 - 4, sy(y), x0 + w, sy(y), "#ddd")
        svg.text(x0 - 7, sy(y) + 4, f"{y:.{digits}f}", 10, "end")
        y += step
    svg.text(x0 + w / 2, y0 + h + 34, xlabel, 12, "middle")
    svg.text(x0 - 52, y0 + h / 2, ylabel, 12, "middle", rotate=-90)
    svg.text(x0 + w / 2, y0 - 10, title, 13, "middle")
    for name, colour, dash, values in series:
        points = [(sx(x), sy(v)) for x, v in zip(xs, values)]
        if dash:
            svg.dashed_polyline(points, colour, dash)
        else:
            svg.polyline(points, colour)


def plot_three(path, tables, series_of, ylabel, legend):
    """One panel per study (k with weights 1..20, k with weights 1..10000, beta); series_of(table,
    xs) gives the panel's (name, colour, dash, values); legend: (name, colour, dash)."""
    svg = Svg(1260, 420)
    titles = [("weights 1..20, beta = 1", "k", False), ("weights 1..10000, beta = 1", "k", False),
              ("weights 1..20, random k", "beta (log scale)", True)]
    for i, (table, (title, xlabel, log_x)) in enumerate(zip(tables, titles)):
        xs = list(table)
        panel(svg, 80 + i * 415, 45, 320, 290, series_of(table, xs), xs, title, xlabel, log_x,
              ylabel)
    left = 630 - 80 * len(legend)
    for j, (name, colour, dash) in enumerate(legend):
        svg.line(left + j * 160, 405, left + 30 + j * 160, 405, colour, 2, dash)
        svg.text(left + 36 + j * 160, 409, name, 12)
    svg.save(path)


def ratio_series(table, xs):
    return [(f"{name} {what}", COLOURS[name], dash,
             [table[x][f"{name.lower()}_{what}"] for x in xs])
            for name in ("GGP", "OGGP") for what, dash in (("worst", None), ("mean", "6,4"))]


def all_at_once_series(table, xs):
    return [("mean", COLOURS["OGGP"], None, [table[x]["oggp_over_aao_mean"] for x in xs]),
            ("largest", COLOURS["OGGP"], "6,4", [table[x]["oggp_over_aao_worst"] for x in xs]),
            ("1", "#000", "2,3", [1.0 for _ in xs])]


def generated_block(args, graphs, elapsed, w20, w10000, beta, timing, tables):
    by_k20, by_k10000, by_beta = tables
    out = [BEGIN, "",
           f"Generated by `python3 scripts/backbone_study.py "
           f"{'--quick' if args.quick else f'--graphs {graphs}'} --seed {args.seed}` "
           f"({elapsed:.0f} s on the shared 2-core machine). Ratio = cost / lower bound; steps "
           "are means; \"fewest steps\" is max(Δ, ⌈m/k⌉); \"all-at-once / bound\" and "
           "\"OGGP / all-at-once\" are means of the ratios; \"all-at-once cheaper\" is the share "
           "of graphs where the fluid all-at-once costs less than OGGP.", ""]
    for title, rows, table in [("k varying, weights 1..20, β = 1", w20, by_k20),
                               ("k varying, weights 1..10000, β = 1", w10000, by_k10000)]:
        s = summarise(rows)
        out += [f"### {title}", "",
                f"All k together: GGP worst {s['ggp_worst']:.5f}, mean {s['ggp_mean']:.4f}; "
                f"OGGP worst {s['oggp_worst']:.5f}, mean {s['oggp_mean']:.4f}; all-at-once / "
                f"bound mean {s['aao_mean']:.4f}, worst {s['aao_worst']:.4f}; OGGP / all-at-once "
                f"mean {s['oggp_over_aao_mean']:.4f}, largest {s['oggp_over_aao_worst']:.4f}.", "",
                markdown_ratio_table("k", table), "", markdown_size_table(title, rows), ""]
    s = summarise(beta)
    out += ["### β varying, weights 1..20, k random (β in weight units)", "",
            f"All β together: GGP worst {s['ggp_worst']:.4f}, OGGP worst {s['oggp_worst']:.4f}; "
            f"all-at-once / bound worst {s['aao_worst']:.4f}.", "",
            markdown_ratio_table("β", by_beta), "", markdown_size_table("β varying", beta), ""]
    slowest = max(max(r["ggp_seconds"], r["oggp_seconds"]) for r in w20 + w10000 + beta)
    out += ["### Processor time on complete graphs", "",
            f"Slowest call in the three studies above: {1000 * slowest:.1f} ms. Complete graphs, "
            "β = 1, the fastest of the repeats:", "", markdown_timing_table(timing), "", END]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", help="a built backbone_study (default: compile one)")
    ap.add_argument("--graphs", type=int, default=5000, help="random graphs per setting")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "studies", "backbone"))
    ap.add_argument("--doc", help="where the tables go, between the markers (default "
                    "docs/studies/backbone.md; with --quick, backbone-tables.md in --out)")
    ap.add_argument("--quick", action="store_true", help="tiny setting, for the ctest")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    doc_path = args.doc or (os.path.join(args.out, "backbone-tables.md") if args.quick else
                            os.path.join(ROOT, "docs", "studies", "backbone.md"))
    started = time.time()
    graphs = 30 if args.quick else args.graphs
    k_max = "4" if args.quick else "20"
    betas = "0.5,1,5" if args.quick else "0.1,0.2,0.5,1,2,3,5,7,10,15,20,30,50,100"
    sizes = "8" if args.quick else "20,40,64,100"
    common = ["--graphs", str(graphs), "--seed", str(args.seed)]
    with tempfile.TemporaryDirectory() as tmp:
        exe = args.exe or build(tmp)
        w20 = run(exe, ["ratios", *common, "--max-weight", "20", "--k-max", k_max],
                  INSTANCE_COLUMNS)
        w10000 = run(exe, ["ratios", *common, "--max-weight", "10000", "--k-max", k_max],
                     INSTANCE_COLUMNS)
        beta = run(exe, ["beta", *common, "--max-weight", "20", "--scale", str(BETA_SCALE),
                         "--betas", betas], INSTANCE_COLUMNS)
        timing = run(exe, ["timing", "--sizes", sizes, "--repeats", "1" if args.quick else "3",
                           "--seed", str(args.seed)], TIMING_COLUMNS)
    for rows, what, count in [(w20, "weights 1..20", graphs * int(k_max)),
                              (w10000, "weights 1..10000", graphs * int(k_max)),
                              (beta, "beta sweep", graphs * len(betas.split(",")))]:
        if len(rows) != count:
            sys.exit(f"{what}: {len(rows)} rows, expected {count}")
        check(rows, what)
    if any(r["ggp_seconds"] <= 0 or r["oggp_seconds"] <= 0 for r in timing):
        sys.exit("timing: a call took no time")

    by_k20 = grouped(w20, lambda r: r["k"])
    by_k10000 = grouped(w10000, lambda r: r["k"])
    by_beta = grouped(beta, lambda r: r["beta"] / BETA_SCALE)  # the column is beta * scale
    write_csv(os.path.join(args.out, "k-weights20.csv"), "k", by_k20)
    write_csv(os.path.join(args.out, "k-weights10000.csv"), "k", by_k10000)
    write_csv(os.path.join(args.out, "beta.csv"), "beta", by_beta)
    with open(os.path.join(args.out, "timing.csv"), "w") as f:
        f.write(",".join(TIMING_COLUMNS) + "\n")
        for r in timing:
            f.write(",".join(f"{r[c]:.6g}" for c in TIMING_COLUMNS) + "\n")
    tables = (by_k20, by_k10000, by_beta)
    plot_three(os.path.join(args.out, "ratios.svg"), tables, ratio_series, "cost / lower bound",
               [(f"{n} {w}", COLOURS[n], d) for n in ("GGP", "OGGP")
                for w, d in (("worst", None), ("mean", "6,4"))])
    plot_three(os.path.join(args.out, "all-at-once.svg"), tables, all_at_once_series,
               "OGGP / all-at-once (fluid)",
               [("mean", COLOURS["OGGP"], None), ("largest", COLOURS["OGGP"], "6,4")])
    for name in ("ratios.svg", "all-at-once.svg"):
        if xml.dom.minidom.parse(os.path.join(args.out, name)).documentElement.tagName != "svg":
            sys.exit(f"{name}: not an SVG document")

    block = generated_block(args, graphs, time.time() - started, w20, w10000, beta, timing,
                            tables)
    doc = open(doc_path).read() if os.path.exists(doc_path) else ""
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip("\n") + ("\n\n" if doc else "") + block + "\n"
    with open(doc_path, "w") as f:
        f.write(doc)
    print(block)
    print(f"wrote {doc_path} and {args.out}/: k-weights20.csv k-weights10000.csv beta.csv "
          "timing.csv ratios.svg all-at-once.svg")


if __name__ == "__main__":
    sys.exit(main())
