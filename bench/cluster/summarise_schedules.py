#!/usr/bin/env python3
"""Tables and a plot from measure_schedules.sh's CSVs (docs/studies/cluster.md).

    bench/cluster/summarise_schedules.py OUT_DIR

Reads OUT_DIR/*.csv (schedule_bench output, one file per cluster run), writes OUT_DIR/summary.md
(markdown tables) and OUT_DIR/schedules.svg (per run, the median over the cases of each
schedule's time relative to all-at-once in the same run), and prints summary.md.
Ratios are always taken within one run (the same cluster, the same load on the shared cores).
"""
import csv
import glob
import os
import statistics
import sys


def config_name(row):
    k = int(row["k"])
    return row["schedule"] + (f" k={k}" if row["schedule"] in ("ggp", "oggp", "auto") else "")


def load(out):
    runs = {}
    headers = {}
    for path in sorted(glob.glob(os.path.join(out, "*.csv"))):
        with open(path) as f:
            lines = f.read().splitlines()
        comments = [l for l in lines if l.startswith("#")]
        rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
        if not rows:
            continue
        label = rows[0]["label"]
        runs[label] = rows
        headers[label] = comments[0][2:] if comments else ""
    return runs, headers


def order(label):
    nodes, rest = label.split("n", 1)
    per, rate = rest.split("r-", 1)
    return (rate != "1gbit", int(nodes), int(per))


def main():
    out = sys.argv[1]
    runs, headers = load(out)
    labels = sorted(runs, key=order)
    lines = []
    configs = []
    for label in labels:
        for row in runs[label]:
            name = config_name(row)
            if name not in configs:
                configs.append(name)
    lines.append("Runs (calibration on each run's own cluster):\n")
    for label in labels:
        lines.append(f"- {headers[label]}")
    # Per run and case: each schedule's median relative to all-at-once; the model's pick.
    lines.append("\n### Time relative to all-at-once (median of the rounds; < 1: faster)\n")
    lines.append("| run | case | all-at-once ms | " + " | ".join(configs[1:]) + " |")
    lines.append("|---|---|---|" + "---|" * (len(configs) - 1))
    ratios = {(label, c): [] for label in labels for c in configs}
    picks = []
    tcp = []
    for label in labels:
        cases = []
        for row in runs[label]:
            if row["case"] not in cases:
                cases.append(row["case"])
        for case in cases:
            rows = {config_name(r): r for r in runs[label] if r["case"] == case}
            base = float(rows["all-at-once"]["median_s"])
            cells = []
            for c in configs[1:]:
                if c not in rows:
                    cells.append("")
                    continue
                ratio = float(rows[c]["median_s"]) / base
                ratios[(label, c)].append(ratio)
                cells.append(f"{ratio:.2f}")
            ratios[(label, "all-at-once")].append(1.0)
            lines.append(f"| {label} | {case} | {base * 1e3:.1f} | " + " | ".join(cells) + " |")
            # The two-level model's pick among the explicit schedules (not auto) against the
            # measured fastest; ties in the prediction go to the fewest steps.
            explicit = {c: r for c, r in rows.items() if not c.startswith("auto")}
            pick = min(explicit, key=lambda c: (float(explicit[c]["two_level_s"]),
                                                int(explicit[c]["steps"])))
            fastest = min(explicit, key=lambda c: float(explicit[c]["median_s"]))
            picks.append((label, case, pick, fastest,
                          float(explicit[pick]["median_s"]) / float(explicit[fastest]["median_s"]),
                          float(explicit[pick]["two_level_s"]), float(explicit[pick]["median_s"]),
                          rows["auto k=2"]["chosen"] if "auto k=2" in rows else ""))
            oggp = [c for c in explicit if c.startswith("oggp")]
            best = min(oggp, key=lambda c: float(explicit[c]["median_s"]))
            backbone_aao = rows["all-at-once"]["backbone_s"]
            backbone_oggp = explicit[best]["backbone_s"]
            tcp.append((label, case, best, float(explicit[best]["median_s"]) / base,
                        float(backbone_oggp) / float(backbone_aao)
                        if backbone_aao and backbone_oggp else None))
    lines.append("\n### Median over the cases, per run\n")
    lines.append("| run | " + " | ".join(configs) + " |")
    lines.append("|---|" + "---|" * len(configs))
    for label in labels:
        lines.append(f"| {label} | " + " | ".join(
            f"{statistics.median(ratios[(label, c)]):.2f}" if ratios[(label, c)] else ""
            for c in configs) + " |")
    lines.append("\n### Prediction against measurement\n")
    lines.append("Model's pick: the schedule with the lowest two-level prediction (calibrated on "
                 "the run); its measured time over the measured fastest's; `auto k=2`: what auto "
                 "chose with at most 2 transfers per step.\n")
    lines.append("| run | case | model's pick | predicted ms | measured ms | measured fastest | "
                 "pick / fastest | auto k=2 chose |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for label, case, pick, fastest, ratio, predicted, measured, auto in picks:
        lines.append(f"| {label} | {case} | {pick} | {predicted * 1e3:.1f} | {measured * 1e3:.1f} "
                     f"| {fastest} | {ratio:.2f} | {auto} |")
    within = [p[4] for p in picks]
    lines.append(f"\nPick / fastest over {len(within)} run-cases: median "
                 f"{statistics.median(within):.2f}, max {max(within):.2f}; the pick is the "
                 f"fastest in {sum(1 for p in picks if p[2] == p[3])}.")
    lines.append("\n### OGGP against all-at-once (TCP sharing the links)\n")
    lines.append("Best OGGP k (measured) over all-at-once, measured, and as the backbone model "
                 "predicts (fluid TCP sharing for all-at-once; one rank per node only).\n")
    lines.append("| run | case | best OGGP | measured OGGP / all-at-once | backbone model |")
    lines.append("|---|---|---|---|---|")
    for label, case, best, measured, model in tcp:
        lines.append(f"| {label} | {case} | {best} | {measured:.2f} | "
                     f"{'' if model is None else f'{model:.2f}'} |")
    measured = [t[3] for t in tcp]
    lines.append(f"\nMeasured OGGP / all-at-once over {len(measured)} run-cases: median "
                 f"{statistics.median(measured):.2f}, range {min(measured):.2f}-{max(measured):.2f}.")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    write_svg(os.path.join(out, "schedules.svg"), labels, configs, ratios)
    print(text)


def write_svg(path, labels, configs, ratios):
    """Grouped bars: per run, each schedule's median ratio to all-at-once."""
    width, height, left, bottom, top = 980, 420, 60, 90, 40
    plot_w, plot_h = width - left - 20, height - bottom - top
    top_value = max([statistics.median(v) for v in ratios.values() if v] + [1.0])
    top_value = max(1.0, round(top_value + 0.25, 1))
    colours = ["#444444", "#1f77b4", "#ff7f0e", "#2ca02c", "#98df8a", "#006400", "#d62728",
               "#ff9896", "#8b0000", "#9467bd"]
    group = plot_w / max(1, len(labels))
    bar = group * 0.8 / max(1, len(configs))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="11">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{left}" y="20" font-size="13">Schedules on the virtual cluster: time / '
             f'all-at-once, median over the cases (lower is faster)</text>']
    def y(v):
        return top + plot_h - v / top_value * plot_h
    for tick in [i / 4 for i in range(int(top_value * 4) + 1)]:
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
                     f'stroke="{"#000" if tick == 1.0 else "#ddd"}"/>')
        parts.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.2f}</text>')
    for g, label in enumerate(labels):
        x0 = left + g * group + group * 0.1
        for i, c in enumerate(configs):
            values = ratios[(label, c)]
            if not values:
                continue
            v = statistics.median(values)
            parts.append(f'<rect x="{x0 + i * bar:.1f}" y="{y(v):.1f}" width="{bar * 0.9:.1f}" '
                         f'height="{y(0) - y(v):.1f}" fill="{colours[i % len(colours)]}">'
                         f'<title>{label} {c}: {v:.2f}</title></rect>')
        parts.append(f'<text x="{x0 + group * 0.4:.1f}" y="{top + plot_h + 16}" '
                     f'text-anchor="middle">{label}</text>')
    for i, c in enumerate(configs):
        lx = left + (i % 5) * 170
        ly = top + plot_h + 40 + (i // 5) * 18
        parts.append(f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" '
                     f'fill="{colours[i % len(colours)]}"/><text x="{lx + 14}" y="{ly}">{c}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
