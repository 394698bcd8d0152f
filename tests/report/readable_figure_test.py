#!/usr/bin/python3
"""A passing case's probe histogram is readable, from a real run to the page in a browser.

Usage: readable_figure_test.py LOCKSIM SOURCE_DIR

Runs the main job's scenario briefly for one design, reports it with a probe limit far above the
worst wake-up (the usual passing case) and checks run-0-probe.png, as matplotlib wrote it and as
headless Chromium shows it on the report page:
- the histogram's bars spread over a good part of the plot's width (the limit does not squash
  them against the y axis: it is an arrow at the edge);
- the worst case's text (the wake-up's cause) lies inside the plot and the image, every word of
  it (the PNG's "locksim-layout" chunk gives the text's and the axes' pixel boxes), and its
  colour is there;
- nothing reaches stderr (no matplotlib warning).
Exit status 0 when every check holds, 1 with the reasons otherwise, 77 (skipped, with the
reason) when the PNG passes but Chromium is not installed.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

from PIL import Image

BARS = (0x2C, 0x7F, 0xB8)
WORST = (0xC0, 0x39, 0x2B)
LIMIT = "5ms"  # far above any simulated probe wake-up of this run (tens of microseconds)


def near(pixel, colour, tolerance=40):
    return all(abs(a - b) <= tolerance for a, b in zip(pixel[:3], colour))


def clipped(image, box):
    """Box (left, top, right, bottom) as whole pixels inside the image."""
    left, top, right, bottom = (int(round(v)) for v in box)
    return (max(0, left), max(0, top), min(image.width, right), min(image.height, bottom))


def columns_with(image, colour, box):
    """The x of every column in box (left, top, right, bottom) holding a pixel of `colour`."""
    left, top, right, bottom = clipped(image, box)
    px = image.load()
    return sorted(
        {x for x in range(left, right) for y in range(top, bottom) if near(px[x, y], colour)}
    )


def count_of(image, colour, box):
    left, top, right, bottom = clipped(image, box)
    px = image.load()
    return sum(
        1 for x in range(left, right) for y in range(top, bottom) if near(px[x, y], colour, 60)
    )


def check_bars(image, box, where, failures):
    """The bars' columns span at least a quarter of the plot's width and fill 15 or more."""
    cols = columns_with(image, BARS, box)
    width = box[2] - box[0]
    span = (cols[-1] - cols[0] + 1) / width if cols else 0
    if len(cols) < 15 or span < 0.25:
        failures.append(
            f"{where}: the histogram's bars cover {len(cols)} columns spanning "
            f"{span:.0%} of the plot's {width:.0f} px: squashed"
        )


def main(argv):
    locksim, source = argv[1], argv[2]
    work = tempfile.mkdtemp(prefix="locksim_readable_")
    failures = []
    try:
        run = os.path.join(work, "run")
        subprocess.run(
            [locksim, "run", os.path.join(source, "scenarios", "default.toml"), "--duration",
             "30ms", "--seed", "1", "-s", "rwlock", "-o", run, "-q"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        report = os.path.join(work, "report")
        done = subprocess.run(
            [locksim, "report", os.path.join(run, "results.json"), "-o", report,
             "--max-probe-wakeup", LIMIT], capture_output=True, text=True)
        if done.returncode != 0 or done.stderr:
            failures.append(f"report: exit status {done.returncode}, stderr:\n{done.stderr}")
            return failures
        with open(os.path.join(report, "figures.json"), encoding="utf-8") as f:
            figure = next(x for x in json.load(f)["figures"] if x["file"] == "run-0-probe")
        worst_us, limit_us = figure["worst"]["x"], figure["limits"][0]["value"]
        if not worst_us * 10 < limit_us:
            failures.append(f"not the passing case this test needs: worst {worst_us} us, "
                            f"limit {limit_us} us")
        if "worst_cause" not in figure:
            failures.append("the run recorded no cause of its worst wake-up")

        png = Image.open(os.path.join(report, "run-0-probe.png"))
        layout = json.loads(png.text["locksim-layout"])
        image = png.convert("RGB")
        axes = layout["axes"]
        check_bars(image, axes, "run-0-probe.png", failures)
        text = layout["worst_text"]
        box = text["box"]
        inside = (box[0] >= axes[0] - 1 and box[2] <= axes[2] + 1 and box[1] >= axes[1] - 1
                  and box[3] <= axes[3] + 1)
        if not inside:
            failures.append(f"the worst case's text {box} leaves the plot {axes}: cut off")
        # Every word of the text is on one of its lines, in order.
        if " ".join(text["lines"]).split() != figure["worst"]["text"].split():
            failures.append(f"the text's lines {text['lines']} are not the worst case's text "
                            f"{figure['worst']['text']!r}")
        if count_of(image, WORST, box) < 100:
            failures.append(f"no text of the worst case's colour in its box {box}")

        if failures:
            return failures
        if shutil.which("chromium") is None:
            print("SKIP: the page part: chromium is not installed (scripts/setup.sh adds it)")
            sys.exit(77)
        # The page in a browser: everything but the probe figure hidden, so that it is on top.
        page = os.path.join(report, "probe-only.html")
        with open(os.path.join(report, "index.html"), encoding="utf-8") as f:
            html = f.read()
        style = ("<style>body > * { display: none; } body > figure#run-0-probe "
                 "{ display: block; margin: 0; }</style>\n</head>")
        with open(page, "w", encoding="utf-8") as f:
            f.write(html.replace("</head>", style, 1))
        shot = os.path.join(work, "shot.png")
        browser = subprocess.run(
            ["chromium", "--headless", "--disable-gpu", "--no-sandbox",
             "--disable-dev-shm-usage", "--no-first-run",
             f"--user-data-dir={os.path.join(work, 'profile')}", "--hide-scrollbars",
             "--window-size=1100,600", f"--screenshot={shot}", f"file://{page}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        if browser.returncode != 0 or not os.path.exists(shot):
            failures.append(f"chromium exited {browser.returncode} without a screenshot")
            return failures
        seen = Image.open(shot).convert("RGB")
        # The image is shown at its own size from the page's top left margin: its axes box is
        # where the PNG's is, shifted by where the image starts (its first non-white row/column).
        px = seen.load()
        marks = [(x, y) for x in range(0, seen.width, 2) for y in range(0, seen.height, 2)
                 if px[x, y] != (255, 255, 255)]
        if not marks:
            failures.append("the page shows nothing")
            return failures
        dx, dy = min(m[0] for m in marks), min(m[1] for m in marks)
        shown = [axes[0] + dx, axes[1] + dy, min(axes[2] + dx, seen.width),
                 min(axes[3] + dy, seen.height)]
        check_bars(seen, shown, "the page in Chromium", failures)
        if count_of(seen, WORST, [box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy]) < 100:
            failures.append("the page in Chromium shows no worst-case text where the image has it")
        return failures
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    problems = main(sys.argv)
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    if not problems:
        print("ok: the probe histogram is readable in the PNG and on the page")
    sys.exit(1 if problems else 0)
