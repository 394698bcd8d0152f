#!/usr/bin/python3
"""Draws the figures of `locksim report`.

Usage: plots.py FIGURES_JSON OUT_DIR

FIGURES_JSON is written by the report command (analysis/report.cpp): {"figures": [...]}, each
with a kind (histogram, spectrum, bars, scaling), a file stem, a size in pixels and its series,
already decoded from the results file. For each figure this writes OUT_DIR/<stem>.png and
OUT_DIR/<stem>.svg at exactly that size.

Exit status: 0 done, 2 bad input, 3 matplotlib missing.
"""

import json
import math
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, NullLocator
except ImportError as e:
    print(f"plots.py: matplotlib is not available to {sys.executable}: {e}", file=sys.stderr)
    sys.exit(3)

DPI = 100
WORST = "#c0392b"
LIMIT = "#555555"
OVERLAY_COLORS = ["#e67e22", "#8e44ad", "#16a085", "#d35400"]

matplotlib.rcParams.update(
    {
        "svg.hashsalt": "locksim",  # stable ids: the same input gives the same SVG
        "font.size": 9,
        "axes.grid": True,
        "grid.alpha": 0.3,
    }
)


def new_figure(spec, rows=1, cols=1):
    fig, axes = plt.subplots(
        rows, cols, figsize=(spec["width"] / DPI, spec["height"] / DPI), dpi=DPI, squeeze=False
    )
    fig.suptitle(spec["title"])
    return fig, axes


def empty(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#777")


def limit_lines(ax, spec, vertical):
    """Pick's limits as dashed grey lines, each with its SVG id (limit-line-<k>)."""
    for k, limit in enumerate(spec.get("limits", [])):
        draw = ax.axvline if vertical else ax.axhline
        line = draw(limit["value"], color=LIMIT, linestyle=(0, (6, 3)), linewidth=1.2,
                    label=limit["label"])
        line.set_gid(f"limit-line-{k}")


def overlays(ax, spec):
    """Measured series over a histogram: step lines of their counts in the same bins."""
    for k, o in enumerate(spec.get("overlays", [])):
        bins = o["bins"]
        if not bins:
            continue
        # The outline of each bin; a gap between bins (no samples there) breaks the line.
        xs, ys = [], []
        for low, width, count in bins:
            if xs and low > xs[-1]:
                xs.append(xs[-1])
                ys.append(float("nan"))
            xs += [low, low + width]
            ys += [count, count]
        (line,) = ax.plot(xs, ys, color=OVERLAY_COLORS[k % len(OVERLAY_COLORS)], linewidth=1.3,
                          label=o["name"])
        line.set_gid(f"measured-{k}")


def histogram(spec):
    """Linear microseconds on x, log count on y, the worst case marked (OSADL / cyclictest)."""
    fig, axes = new_figure(spec)
    ax = axes[0][0]
    bins = spec["bins"]
    if bins:
        ax.bar(
            [b[0] for b in bins],
            [b[2] for b in bins],
            width=[b[1] for b in bins],
            align="edge",
            color="#2c7fb8",
            edgecolor="#2c7fb8",
            linewidth=0.3,
        )
        ax.set_yscale("log")
        ax.set_ylim(bottom=0.5)
        right = max(b[0] + b[1] for b in bins)
        worst = spec.get("worst")
        if worst:
            right = max(right, worst["x"])
            ax.axvline(worst["x"], color=WORST, linestyle="--", linewidth=1)
            ax.annotate(
                worst["text"],
                xy=(worst["x"], 1),
                xycoords=("data", "axes fraction"),
                xytext=(-4, -4),
                textcoords="offset points",
                ha="right",
                va="top",
                color=WORST,
                fontsize=8,
            )
        for limit in spec.get("limits", []):
            right = max(right, limit["value"] * 1.05)
        overlays(ax, spec)
        limit_lines(ax, spec, vertical=True)
        ax.set_xlim(0, right * 1.03 if right > 0 else 1)
        if spec.get("limits") or spec.get("overlays"):
            ax.legend(loc="upper center", fontsize=7)
    else:
        empty(ax, spec.get("empty_text", "no samples"))
    ax.set_xlabel(f"{spec['xlabel']}    ({spec['samples']} samples)")
    ax.set_ylabel(spec["ylabel"])
    return fig


def percentile_label(inv):
    p = 100.0 * (1.0 - 1.0 / inv)
    if p == 0:
        return "0%"
    digits = max(0, round(math.log10(inv)) - 2)
    return f"{p:.{digits}f}%"


def spectrum(spec):
    """HdrHistogram style: latency against 1/(1-p) on a log axis, one line per design."""
    fig, axes = new_figure(spec)
    ax = axes[0][0]
    top = 1
    for line in spec["lines"]:
        ax.plot(line["x"], line["y"], label=line["name"], linewidth=1.5)
        top = max(top, max(line["x"]))
        ax.plot([line["x"][-1]], [line["y"][-1]], marker="o", markersize=3, color="#444")
    ax.set_xscale("log")
    decades = max(1, math.ceil(math.log10(top)))
    ticks = [10.0**k for k in range(decades + 1)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([percentile_label(t) for t in ticks])
    ax.set_xlim(1, ticks[-1])
    limit_lines(ax, spec, vertical=False)
    if spec.get("log_y"):
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlabel("percentile")
    ax.set_ylabel(spec["ylabel"])
    ax.legend(loc="upper left", fontsize=8)
    return fig


def bars(spec):
    """Grouped horizontal bars: one group per design, one bar per part of the cost."""
    fig, axes = new_figure(spec)
    ax = axes[0][0]
    groups = spec["groups"]
    parts = spec["parts"]
    height = 0.8 / len(parts)
    positive = [v for p in parts for v in p["values"] if v > 0]
    for k, part in enumerate(parts):
        ys = [g + k * height for g in range(len(groups))]
        vals = [v if v > 0 else float("nan") for v in part["values"]]
        ax.barh(ys, vals, height=height, label=part["name"])
    ax.set_yticks([g + 0.4 - height / 2 for g in range(len(groups))])
    ax.set_yticklabels(groups)
    ax.invert_yaxis()
    if positive and max(positive) / min(positive) > 50:
        ax.set_xscale("log")
    if not positive:
        empty(ax, "every part is zero")
    ax.set_xlabel(spec["xlabel"])
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)  # beside the bars
    return fig


def scaling(spec):
    """Metric against the swept axis, one panel per metric, one line per design."""
    panels = spec["panels"]
    cols = 2
    rows = math.ceil(len(panels) / cols)
    fig, axes = new_figure(spec, rows, cols)
    for i, panel in enumerate(panels):
        ax = axes[i // cols][i % cols]
        for line in panel["lines"]:
            xs, ys = line["x"], line["y"]
            if panel.get("log_y"):
                ys = [y if y > 0 else float("nan") for y in ys]
            ax.plot(xs, ys, marker="o", markersize=3, label=line["name"])
        if panel.get("log_y"):
            ax.set_yscale("log")
        ax.set_title(panel["title"], fontsize=9)
        ax.set_ylabel(panel["ylabel"])
        ax.set_xlabel(spec["xlabel"])
        if spec.get("categorical"):
            ax.set_xticks(range(len(spec["xticks"])))
            ax.set_xticklabels(spec["xticks"])
        if i == 0:
            ax.legend(fontsize=7)
    for j in range(len(panels), rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    return fig


KINDS = {"histogram": histogram, "spectrum": spectrum, "bars": bars, "scaling": scaling}


def main(argv):
    if len(argv) != 3:
        print("usage: plots.py FIGURES_JSON OUT_DIR", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            figures = json.load(f)["figures"]
    except (OSError, ValueError, KeyError) as e:
        print(f"plots.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    out = argv[2]
    for spec in figures:
        draw = KINDS.get(spec.get("kind"))
        if draw is None:
            print(f"plots.py: {argv[1]}: unknown figure kind {spec.get('kind')!r}", file=sys.stderr)
            return 2
        fig = draw(spec)
        # A fixed layout, not bbox_inches="tight": the image keeps the size it was asked for.
        fig.tight_layout()
        stem = os.path.join(out, spec["file"])
        fig.savefig(stem + ".png", dpi=DPI, metadata={"Software": None})
        fig.savefig(stem + ".svg", metadata={"Date": None})
        plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
