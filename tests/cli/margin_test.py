#!/usr/bin/env python3
"""locksim margin from real runs: a crossover known in closed form, its files, a list scan.

usage: margin_test.py LOCKSIM SCENARIO DEFAULT_SCENARIO OUTDIR

SCENARIO (tests/scenarios/margin_sidtab.toml) reloads the policy while `preload` SIDs are in the
table; the reload's SID table conversion keeps interrupts off for a time linear in their number.
1. The worst IRQs-off section is measured here with `locksim run` at two preload counts; the
   count where a line through them crosses the limit is the analytic crossover. margin along
   workload.containers.preload must put it within 5% (both ends of its interval, adjacent
   integers), say it bisected, count its runs right and run no (value, design, seed) twice.
2. Its files: margin.json agrees with the table; pick --point judges one value of results.json
   (met at the interval's lower end, not at its upper end); report draws the margin figure,
   with the limit line, the crossover marked and a point at every value run.
3. The same search with -j 1 and --no-wall-clock writes the same files and prints the same table.
4. An ordered list that goes up and down (--values 500,4000,1000) is scanned and reported as
   not monotone, with both changes.
5. A short default scenario along machine.cpus prints where the pick changes, or that it does
   not in the range.
"""
import json
import os
import re
import subprocess
import sys

from cli_check import expect, fail, run

LIMIT_US = 50
LABEL = "rwlock@5.9"
KEY = "workload.containers.preload"


def irqs_off_at(locksim, scenario, preload, out):
    """The worst IRQs-off section (ns) of a plain run with `preload` SIDs."""
    with open(scenario) as f:
        text = f.read()
    path = os.path.join(out, f"preload-{preload}.toml")
    with open(path, "w") as f:
        f.write(text.replace("preload = 1000", f"preload = {preload}"))
    run([locksim, "run", path, "-q", "-o", os.path.join(out, f"run-{preload}")])
    with open(os.path.join(out, f"run-{preload}", "results.json")) as f:
        runs = json.load(f)["runs"]
    return max(r["irqs_off"]["max_ns"] for r in runs)


def main():
    locksim, scenario, default, out = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)

    # 1. The analytic crossover from two measured points.
    n1, n2 = 1000, 3000
    f1, f2 = irqs_off_at(locksim, scenario, n1, out), irqs_off_at(locksim, scenario, n2, out)
    expect(f2 > f1, f"the section does not grow: {f1} ns at {n1}, {f2} ns at {n2}")
    analytic = n1 + (LIMIT_US * 1000 - f1) * (n2 - n1) / (f2 - f1)
    search = [locksim, "margin", scenario, "--key", KEY, "--range", "500:4000",
              "--max-irqs-off", f"{LIMIT_US}us", "--no-wall-clock"]
    text = run(search + ["-o", os.path.join(out, "m")])
    m = re.search(rf"^{re.escape(LABEL)}\s+irqs-off\s+stops meeting between (\d+) \(([^)]*)\) "
                  r"and (\d+) \(([^)]*)\) \[bisection\]$", text, re.M)
    expect(m, "no bisected crossover line", text)
    lo, hi = int(m.group(1)), int(m.group(3))
    expect(hi == lo + 1, f"the interval [{lo}, {hi}] is not two adjacent integers", text)
    for v in (lo, hi):
        expect(abs(v - analytic) <= 0.05 * analytic,
               f"crossover end {v} is more than 5% from the analytic {analytic:.1f} "
               f"({f1} ns at {n1}, {f2} ns at {n2})", text)
    with open(os.path.join(out, "m", "results.json")) as f:
        results = json.load(f)
    keys = [(r["point"][KEY], r["label"], r["seed"]) for r in results["runs"]]
    expect(len(keys) == len(set(keys)), f"a (value, design, seed) ran twice: {sorted(keys)}")
    runs = re.search(r"^runs: (\d+) \((\d+) values", text, re.M)
    expect(runs and int(runs.group(1)) == len(keys), "the runs line does not count the runs", text)
    expect(int(runs.group(2)) == len({k[0] for k in keys}), "the values counted are wrong", text)
    expect(len(keys) < 20, f"{len(keys)} runs for one design over 3500 integers", text)

    # 2. margin.json, pick --point, report.
    with open(os.path.join(out, "m", "margin.json")) as f:
        margin = json.load(f)
    (c,) = margin["crossovers"]
    expect(c["method"] == "bisection" and c["monotone"], f"margin.json: {c}")
    expect((c["changes"][0]["lo"], c["changes"][0]["hi"]) == (str(lo), str(hi)),
           f"margin.json's crossover {c['changes']} is not the table's [{lo}, {hi}]")
    measured_lo = [r["irqs_off"]["max_ns"] for r in results["runs"] if r["point"][KEY] == str(lo)]
    expect(margin["values"][[v["value"] for v in margin["values"]].index(str(lo))]["designs"]
           [LABEL]["limits"]["irqs_off.max_ns"]["figure"] == max(measured_lo),
           "margin.json's figure at the crossover is not the run's")
    pick = [locksim, "pick", os.path.join(out, "m", "results.json"), "--max-irqs-off",
            f"{LIMIT_US}us", "--point"]
    expect(f"pick: {LABEL}" in run(pick + [f"{KEY}={lo}"], 0), "pick --point at the lower end")
    run(pick + [f"{KEY}={hi}"], 3)
    report = run([locksim, "report", os.path.join(out, "m", "margin.json"), "-o",
                  os.path.join(out, "report")])
    expect("--max-irqs-off 50.0us" in report, "report does not take margin's limits", report)
    for ext in ("png", "svg"):
        path = os.path.join(out, "report", f"margin-{KEY}.{ext}")
        expect(os.path.getsize(path) > 0, f"{path} is empty")
    with open(os.path.join(out, "report", "index.html")) as f:
        expect(f"margin-{KEY}.svg" in f.read(), "index.html does not show the margin figure")
    with open(os.path.join(out, "report", "figures.json")) as f:
        (fig,) = [g for g in json.load(f)["figures"] if g["kind"] == "margin"]
    (panel,) = fig["panels"]
    expect(panel["limits"][0]["value"] == LIMIT_US, f"the figure's limit line: {panel['limits']}")
    expect(panel["marks"] == [{"name": LABEL, "lo": lo, "hi": hi}],
           f"the figure's crossover mark {panel['marks']} is not [{lo}, {hi}]")
    (line,) = panel["lines"]
    expect(line["x"] == sorted({int(k[0]) for k in keys}),
           f"the figure's line is not drawn at every value run: {line['x']}")

    # 3. Byte for byte again, one run at a time.
    again = run(search + ["-j", "1", "-o", os.path.join(out, "m1")])
    expect(again.replace("/m1/", "/m/") == text, "the table differs with -j 1", again)
    for name in ("margin.json", "results.json"):
        with open(os.path.join(out, "m", name), "rb") as a, \
                open(os.path.join(out, "m1", name), "rb") as b:
            expect(a.read() == b.read(), f"{name} differs with -j 1")

    # 4. A list that goes over the limit and back.
    listed = run([locksim, "margin", scenario, "--key", KEY, "--values", "500,4000,1000",
                  "--max-irqs-off", f"{LIMIT_US}us"])
    expect(re.search(rf"^{re.escape(LABEL)}\s+irqs-off\s+not monotone: stops meeting between 500 "
                     r"\([^)]*\) and 4000 \([^)]*\); starts meeting between 4000 \([^)]*\) and "
                     r"1000 \([^)]*\) \[scan\]$", listed, re.M),
           "the list's two changes are not reported as not monotone", listed)
    expect(re.search(r"^runs: 3 ", listed, re.M), "a list of three values is three runs", listed)

    # 5. The default scenario, cut short, along the CPU count.
    text = run([locksim, "margin", default, "--key", "machine.cpus", "--range", "2:8",
                "--steps", "3", "--duration", "50ms", "--seed", "1", "--max-preempt-off",
                "100us", "--max-toggle", "10ms"])
    expect(re.search(r"^(the pick changes from \S+ to \S+ between \d+ and \d+ \[bisection\]|"
                     r"the pick is \S+ over the whole range|no design meets every limit "
                     r"anywhere in the range)$", text, re.M),
           "no line says where the pick changes", text)
    print("ok")


if __name__ == "__main__":
    main()
