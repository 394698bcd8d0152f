#!/usr/bin/python3
"""Draws the figures of `locksim report`.

Usage: plots.py FIGURES_JSON OUT_DIR [PART/PARTS]

FIGURES_JSON is written by the report command (analysis/report.cpp): {"figures": [...]}, each
with a kind (histogram, spectrum, bars, scaling), a file stem, a size in pixels and its series,
already decoded from the results file. For each figure this writes OUT_DIR/<stem>.png and
OUT_DIR/<stem>.svg at exactly that size; with PART/PARTS (0/2, 1/2), only figures PART,
PART + PARTS, ... (the report runs one process per part, in parallel). A histogram's PNG carries
the pixel boxes of its axes and of its worst case's text as the text chunk "locksim-layout".

Exit status: 0 done, 2 bad input, 3 matplotlib missing.
"""

import json
import math
import os
import sys
import textwrap

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
BARS = "#2c7fb8"
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


def legend(ax, **kwargs):
    """The axes' legend, when something in it has a label (matplotlib warns otherwise)."""
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(**kwargs)


def empty(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#777")


def limit_lines(ax, spec, vertical):
    """Pick's limits as dashed grey lines, each with its SVG id (limit-line-<k>)."""
    for k, limit in enumerate(spec.get("limits", [])):
        draw = ax.axvline if vertical else ax.axhline
        line = draw(limit["value"], color=LIMIT, linestyle=(0, (6, 3)), linewidth=1.2,
                    label=limit["label"])
        line.set_gid(f"limit-line-{k}")


def step_line(ax, bins, color, name, gid):
    """A histogram's counts as a step outline of its bins; a gap between bins (no samples
    there) breaks the line."""
    xs, ys = [], []
    for low, width, count in bins:
        if xs and low > xs[-1]:
            xs.append(xs[-1])
            ys.append(float("nan"))
        xs += [low, low + width]
        ys += [count, count]
    (line,) = ax.plot(xs, ys, color=color, linewidth=1.3, label=name)
    line.set_gid(gid)


def histogram_extent(spec):
    """The x range the histogram's own samples, its series and the measured overlays span."""
    lows, highs = [], []
    for bins in [spec["bins"]] + [s["bins"] for s in spec.get("series", []) + spec.get("overlays", [])]:
        for low, width, _ in bins:
            lows.append(low)
            highs.append(low + width)
    worst = spec.get("worst")
    if worst:
        highs.append(worst["x"])
    return (min(lows), max(highs)) if lows else (0.0, 0.0)


# A limit beyond the samples by at most this share of their range widens the axis to show it;
# one further away is an arrow at the axis' edge, so that it cannot squash the histogram.
LIMIT_REACH = 0.25


def histogram(spec):
    """Linear microseconds on x, log count on y, the worst case marked (OSADL / cyclictest).

    The x axis spans the samples (from zero unless they start far from it); a limit far outside
    is an arrow at the edge. The legend sits below the axes, the worst case's text is wrapped to
    the room beside its line once the layout is known (place_worst)."""
    fig, axes = new_figure(spec)
    ax = axes[0][0]
    ax.set_xlabel(f"{spec['xlabel']}    ({spec['samples']} samples)")
    ax.set_ylabel(spec["ylabel"])
    bins = spec["bins"]
    series = [s for s in spec.get("series", []) if s["bins"]]
    overlays = [o for o in spec.get("overlays", []) if o["bins"]]
    if not bins and not series:
        empty(ax, spec.get("empty_text", "no samples"))
        return fig
    top = 1
    if bins:
        ax.bar([b[0] for b in bins], [b[2] for b in bins], width=[b[1] for b in bins],
               align="edge", color=BARS, edgecolor=BARS, linewidth=0.3, gid="histogram-bars")
        top = max(b[2] for b in bins)
    for k, s in enumerate(series):
        step_line(ax, s["bins"], f"C{k}", s["name"], f"series-{k}")
        top = max(top, max(b[2] for b in s["bins"]))
    for k, o in enumerate(overlays):
        step_line(ax, o["bins"], OVERLAY_COLORS[k % len(OVERLAY_COLORS)], o["name"],
                  f"measured-{k}")
        top = max(top, max(b[2] for b in o["bins"]))
    ax.set_yscale("log")
    ax.set_ylim(0.5, top * 30)  # room above the bars for the worst case's text
    lo, hi = histogram_extent(spec)
    span = max(hi - lo, 1e-3)
    left = 0.0 if lo <= 0.25 * hi else lo - 0.05 * span
    inside, outside = [], []
    for k, limit in enumerate(spec.get("limits", [])):
        v = limit["value"]
        if left <= v <= hi + LIMIT_REACH * (hi - left):
            inside.append((k, limit))
            hi = max(hi, v)
        else:
            outside.append((k, limit))
    right = hi + 0.04 * (hi - left)
    ax.set_xlim(left, right)
    for k, limit in inside:
        line = ax.axvline(limit["value"], color=LIMIT, linestyle=(0, (6, 3)), linewidth=1.2,
                          label=limit["label"])
        line.set_gid(f"limit-line-{k}")
    for k, limit in outside:
        # An arrow at the edge, pointing to where the limit lies, and the legend says so.
        beyond = limit["value"] > right
        mark = ax.annotate(
            "",
            xy=(1.0 if beyond else 0.0, 0.5),
            xycoords="axes fraction",
            xytext=(-14 if beyond else 14, 0),
            textcoords="offset points",
            arrowprops={"arrowstyle": "-|>", "color": LIMIT, "linestyle": (0, (3, 1.5)),
                        "linewidth": 1.2},
        )
        mark.set_gid(f"limit-line-{k}")
        side, arrow = ("right", "\u2192") if beyond else ("left", "\u2190")
        ax.plot([], [], color=LIMIT, linestyle=(0, (6, 3)), linewidth=1.2,
                label=f"{limit['label']}: off the axis to the {side} ({arrow} at its edge)")
    ncol = min(3, len(ax.get_legend_handles_labels()[0]))
    legend(ax, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=max(1, ncol), fontsize=7,
           frameon=False)
    worst = spec.get("worst")
    if worst:
        ax.axvline(worst["x"], color=WORST, linestyle="--", linewidth=1, gid="worst-line")
        fig.locksim_after_layout = lambda: place_worst(fig, ax, worst)
    return fig


def place_worst(fig, ax, worst):
    """The worst case's text at the top of the axes, beside its line on the side with more room,
    wrapped to that room so that no line is cut off; returns its layout for the PNG's metadata."""
    renderer = fig.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    x = ax.transData.transform((worst["x"], 1))[0]
    left_of_line = x - box.x0 > box.x1 - x
    room = (x - box.x0 if left_of_line else box.x1 - x) - 8
    text = ax.annotate(
        "",
        xy=(worst["x"], 1),
        xycoords=("data", "axes fraction"),
        xytext=(-4 if left_of_line else 4, -4),
        textcoords="offset points",
        ha="right" if left_of_line else "left",
        va="top",
        color=WORST,
        fontsize=8,
        gid="worst-text",
        bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8},
    )
    paragraphs = worst["text"].split("\n")
    chars = max(len(p) for p in paragraphs)
    while True:
        lines = [w for p in paragraphs for w in (textwrap.wrap(p, chars) or [""])]
        text.set_text("\n".join(lines))
        extent = text.get_window_extent(renderer)
        if extent.width <= room or chars <= 12:
            break
        chars = max(12, int(chars * room / extent.width) - 1)
    height = fig.bbox.height
    return {
        "axes": pixel_box(box, height),
        "worst_text": {"box": pixel_box(extent, height), "lines": lines},
    }


def pixel_box(b, height):
    """A display box as [left, top, right, bottom] in the image's pixels (top row 0)."""
    return [round(b.x0, 1), round(height - b.y1, 1), round(b.x1, 1), round(height - b.y0, 1)]


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
    legend(ax, loc="upper left", fontsize=8)
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
    legend(ax, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)  # beside the bars
    return fig


def scaling(spec):
    """Metric against the swept axis, one panel per metric, one line per design."""
    panels = spec["panels"]
    cols = min(2, len(panels))
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
            legend(ax, fontsize=7)
    for j in range(len(panels), rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    return fig


def margin(spec):
    """scaling's panels, each with its limit (dashed) and crossovers (dotted, the design's colour)."""
    fig = scaling(spec)
    for ax, panel in zip(fig.axes, spec["panels"]):
        limit_lines(ax, panel, vertical=False)
        colours = {line.get_label(): line.get_color() for line in ax.get_lines()}
        for k, mark in enumerate(panel["marks"]):
            line = ax.axvline((mark["lo"] + mark["hi"]) / 2, color=colours.get(mark["name"], LIMIT),
                              linestyle=":", linewidth=1.2)
            line.set_gid(f"crossover-{k}")
    return fig


def grid(spec):
    """A figure with a panel per spec panel, two columns at most; returns it and the axes."""
    panels = spec["panels"]
    cols = min(2, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = new_figure(spec, rows, cols)
    for j in range(len(panels), rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    return fig, [axes[i // cols][i % cols] for i in range(len(panels))]


def shares(spec):
    """robust's shares: per panel (a limit), a horizontal bar per design, 0-100%, with its
    interval; each bar's SVG id is share-<panel>-<design index>."""
    fig, axes = grid(spec)
    for i, (ax, panel) in enumerate(zip(axes, spec["panels"])):
        names = [b["name"] for b in panel["bars"]]
        for k, bar in enumerate(panel["bars"]):
            if not bar["judged"]:
                ax.text(1, k, "not judged", va="center", fontsize=7, color=LIMIT)
                continue
            patch = ax.barh([k], [bar["share"]], color=BARS, height=0.6)[0]
            patch.set_gid(f"share-{i}-{k}")
            ax.errorbar([bar["share"]], [k],
                        xerr=[[bar["share"] - bar["lo"]], [bar["hi"] - bar["share"]]],
                        color=LIMIT, capsize=3, linewidth=1)
            ax.text(101, k, bar["text"], va="center", fontsize=7)
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels(names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, 112)
        ax.set_xlabel("worlds meeting it (%)")
        ax.set_title(panel["title"], fontsize=9)
    return fig


def tornado(spec):
    """robust's sensitivity: per panel (a design's figure), a horizontal bar per price family
    from the figure at its lowest factor to its highest, the nominal figure as a dot and the
    limit dashed; each bar's SVG id is tornado-<panel>-<family index>."""
    fig, axes = grid(spec)
    for i, (ax, panel) in enumerate(zip(axes, spec["panels"])):
        names = [b["name"] for b in panel["bars"]]
        for k, bar in enumerate(panel["bars"]):
            lo, hi = sorted((bar["low"], bar["high"]))
            patch = ax.barh([k], [hi - lo], left=[lo], color=BARS, height=0.6)[0]
            patch.set_gid(f"tornado-{i}-{k}")
        ax.plot([panel["nominal"]] * len(names), range(len(names)), "o", color=WORST,
                markersize=4, label="at the profile's prices")
        limit_lines(ax, panel, vertical=True)
        ax.margins(x=0.08)  # a limit at the end of a bar stays in sight
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels(names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(panel["xlabel"])
        ax.set_title(panel["title"], fontsize=9)
        if i == 0:
            legend(ax, fontsize=7)
    return fig


KINDS = {
    "histogram": histogram,
    "spectrum": spectrum,
    "bars": bars,
    "scaling": scaling,
    "margin": margin,
    "shares": shares,
    "tornado": tornado,
}


def draw(spec, out):
    """Writes OUT/<stem>.png and .svg for one figure."""
    fig = KINDS[spec["kind"]](spec)
    # A fixed layout, not bbox_inches="tight": the image keeps the size it was asked for.
    fig.tight_layout()
    layout = {}
    after = getattr(fig, "locksim_after_layout", None)
    if after:
        layout = after()
    stem = os.path.join(out, spec["file"])
    # The layout of the text placed after it (pixel boxes), for checks of the image.
    meta = {"Software": None}
    if layout:
        meta["locksim-layout"] = json.dumps(layout, separators=(",", ":"))
    fig.savefig(stem + ".png", dpi=DPI, metadata=meta)
    fig.savefig(stem + ".svg", metadata={"Date": None})
    plt.close(fig)


def main(argv):
    usage = "usage: plots.py FIGURES_JSON OUT_DIR [PART/PARTS]"
    if len(argv) not in (3, 4):
        print(usage, file=sys.stderr)
        return 2
    part, parts = 0, 1
    if len(argv) == 4:
        try:
            part, parts = (int(x) for x in argv[3].split("/"))
            if not 0 <= part < parts:
                raise ValueError(argv[3])
        except ValueError:
            print(f"plots.py: {argv[3]}: not PART/PARTS; {usage}", file=sys.stderr)
            return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            figures = json.load(f)["figures"]
    except (OSError, ValueError, KeyError) as e:
        print(f"plots.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    for spec in figures:
        if spec.get("kind") not in KINDS:
            print(f"plots.py: {argv[1]}: unknown figure kind {spec.get('kind')!r}", file=sys.stderr)
            return 2
    # Figure i goes to part i mod PARTS: processes given the parts share the work evenly.
    for spec in figures[part::parts]:
        draw(spec, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
