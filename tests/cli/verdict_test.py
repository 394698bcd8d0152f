#!/usr/bin/env python3
"""pick and report on real runs: a sweep's verdict per point, incomplete results, one verdict.

usage: verdict_test.py LOCKSIM SCENARIO OUTDIR

SCENARIO sweeps core.sidtab over three eras; its strategies include rwsem, whose sleeping reader
is reached from softirq context (a self-check violation). The expected verdicts are computed here
from results.json's figures, not taken from pick.
1. compare on the sweep scenario says, in one line, that it runs only the base point, and names
   it; its results hold no sweep.
2. pick over the sweep with a limit that one era fails and two meet: a row per point, each cell
   as the figures say, and the point that decided the worst case named; --point judges one.
3. pick with no limit says so and still ranks; the broken design reads broken.
4. Incomplete results (runs removed, "complete": false): a warning, the design with no run
   listed as not run and not ranked, the point a design lacks named, exit status 4.
5. pick and report, given the same flags, name the same pick and the same verdict per design.
"""
import html
import json
import os
import re
import subprocess
import sys

LIMIT_OPTION = "--max-irqs-off"
METRIC = ("irqs_off", "max_ns")  # the results-file figure that option limits
POINTS = ["hash", "linear", "legacy"]


def fail(msg):
    print(msg)
    sys.exit(1)


def run(cmd, expect_rc):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != expect_rc:
        fail(f"{' '.join(cmd)}: exit status {p.returncode}, expected {expect_rc}\n"
             f"{p.stdout}{p.stderr}")
    return p.stdout, p.stderr


def expect(cond, what, text):
    if not cond:
        fail(f"{what}\n--- output ---\n{text}")


def worst_by_point(results, label):
    """The largest value of METRIC per core.sidtab value, over the design's runs."""
    worst = {}
    for r in results["runs"]:
        if r["label"] == label:
            v = r[METRIC[0]][METRIC[1]]
            p = r["point"]["core.sidtab"]
            worst[p] = max(worst.get(p, 0), v)
    return worst


def pick_line(text):
    return next(line for line in text.splitlines() if line.startswith("pick: "))


def pick_verdicts(text):
    """Design -> verdict text, from pick's ranking lines."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^ ?(?:\d+|-)\. (.*)$", line)
        if m:
            label, verdict = re.split(r"\s{2,}", m.group(1))[:2]
            out[label] = verdict
    return out


def report_verdicts(page):
    """Design -> verdict text, from the report's verdict table."""
    table = page[page.index('id="verdict-table"'):]
    table = table[:table.index("</table>")]
    out = {}
    for row in re.findall(r"<tr class=\"[^\"]*\"><td>\d*</td><td>([^<]*)</td><td>([^<]*)</td>",
                          table):
        out[html.unescape(row[0])] = html.unescape(row[1])
    return out


def main():
    locksim, scenario, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)

    # 1. compare runs the base point only, and says so.
    _, err = run([locksim, "compare", scenario, "-q", "--no-wall-clock", "-o",
                  os.path.join(out, "compare")], 0)
    notes = [line for line in err.splitlines() if "[sweep]" in line]
    expect(len(notes) == 1, "compare: expected one line about the sweep on stderr", err)
    expect("compare runs only its base point, core.sidtab=hash;" in notes[0]
           and "of 3 points" in notes[0], "compare: the note does not name the base point", err)
    with open(os.path.join(out, "compare", "results.json")) as f:
        base = json.load(f)
    expect(base["scenario"]["sweep"] == {}, "compare: the results name a sweep not run",
           json.dumps(base["scenario"]))
    expect(all(r["point"] == {} for r in base["runs"]), "compare: a run has a sweep point", "")

    # 2. pick over the sweep: a limit between the eras' worst cases of rwlock.
    sweep = os.path.join(out, "sweep")
    run([locksim, "sweep", scenario, "-q", "--no-wall-clock", "-o", sweep], 0)
    results_path = os.path.join(sweep, "results.json")
    with open(results_path) as f:
        results = json.load(f)
    worst = worst_by_point(results, "rwlock")
    ordered = sorted(worst.values())
    expect(len(ordered) == 3 and ordered[1] < ordered[2],
           "the scenario no longer separates one era from the other two", json.dumps(worst))
    limit_ns = (ordered[1] + ordered[2]) // 2
    limit = f"{limit_ns}ns"
    failing = next(p for p, v in worst.items() if v > limit_ns)
    text, _ = run([locksim, "pick", results_path, LIMIT_OPTION, limit], 3)
    rows = {p: [line for line in text.splitlines() if line.startswith(f"  core.sidtab={p} ")]
            for p in POINTS}
    expect(all(len(r) == 1 for r in rows.values()), "pick: not one verdict row per point", text)
    header = next(line for line in text.splitlines() if line.startswith("  point "))
    columns = header.split()[1:]
    for p in POINTS:
        cells = re.split(r"\s{2,}", rows[p][0].strip())[1:]
        cell = cells[columns.index("rwlock")]
        want = "over" if worst[p] > limit_ns else "meets"
        expect(cell.startswith(want), f"pick: rwlock at {p} should read {want}: {cell}", text)
        expect(cells[columns.index("rwsem")] == "broken", f"pick: rwsem at {p} is not broken",
               text)
    expect(f"worst case at core.sidtab={failing}: over a limit; meets the limits at 2 of 3 "
           "points" in text, "pick: the deciding point is not named", text)
    expect("judged: 9 runs of 3 designs, 3 points, 1 seed" in text, "pick: counts", text)
    passing = next(p for p in POINTS if p != failing)
    text, _ = run([locksim, "pick", results_path, LIMIT_OPTION, limit, "--point",
                   f"core.sidtab={passing}"], 0)
    expect(f"1 point (core.sidtab={passing})" in text and "verdict per point" not in text,
           "pick --point: not one point judged", text)

    # 3. No limit: said so, still ranked; the broken design reads broken.
    text, _ = run([locksim, "pick", results_path], 0)
    expect("limits: none given" in text and "meets the limits" not in text,
           "pick without limits: does not say that no limit was given", text)
    verdicts = pick_verdicts(text)
    expect(verdicts.get("rwsem") == "broken (self-check violations)"
           and verdicts.get("rwlock") == "no limit given", "pick without limits: verdicts", text)
    expect(re.search(r"\n 1\. \S+ .*\n(.*\n)*      above \S+: ", text) is not None,
           "pick: a place without the figure that decided it", text)

    # 4. Incomplete results: rwlock never ran, rcu-cond-dup not at one point.
    partial = dict(results)
    partial["runs"] = [r for r in results["runs"] if r["label"] != "rwlock"
                       and not (r["label"] == "rcu-cond-dup"
                                and r["point"]["core.sidtab"] == failing)]
    partial["scenario"] = dict(results["scenario"], complete=False)
    partial_path = os.path.join(out, "partial.json")
    with open(partial_path, "w") as f:
        json.dump(partial, f)
    text, _ = run([locksim, "pick", partial_path, LIMIT_OPTION, limit], 4)
    expect("warning: incomplete results" in text and "5 of 9 planned runs are here" in text,
           "pick on incomplete results: no warning", text)
    expect("(not run: rwlock)" in pick_line(text), "pick: rwlock is not listed as not run",
           text)
    expect(pick_verdicts(text).get("rwlock") == "not run"
           and not re.search(r"^ ?\d+\. rwlock ", text, re.M),
           "pick: rwlock is ranked although it never ran", text)
    expect(f"not run at core.sidtab={failing}" in text, "pick: the missing point is not named",
           text)
    _, err = run([locksim, "report", partial_path, "-o", os.path.join(out, "report-partial")], 0)
    expect("incomplete results" in err, "report on incomplete results: no warning", err)
    with open(os.path.join(out, "report-partial", "index.html")) as f:
        page = f.read()
    expect(report_verdicts(page).get("rwlock") == "not run",
           "report: rwlock is not listed as not run", page)

    # 5. pick and report agree, with and without limits.
    for flags in ([LIMIT_OPTION, limit], []):
        text, _ = run([locksim, "pick", results_path, *flags], 3 if flags else 0)
        dest = os.path.join(out, "report-" + ("limit" if flags else "none"))
        said, _ = run([locksim, "report", results_path, "-o", dest, *flags], 0)
        shown = "--max-irqs-off" if flags else "none given"
        expect(said.startswith("report: limits: ") and shown in said.splitlines()[0],
               "report: does not print the limits it used", said)
        with open(os.path.join(dest, "index.html")) as f:
            page = f.read()
        m = re.search(r'<p id="pick">([^<]*)</p>', page)
        expect(m is not None and html.unescape(m.group(1)) == pick_line(text),
               f"report and pick name different picks ({flags})", page[:2000] + text)
        expect(report_verdicts(page) == pick_verdicts(text),
               f"report and pick differ ({flags}): {report_verdicts(page)} vs "
               f"{pick_verdicts(text)}", text)


if __name__ == "__main__":
    main()
