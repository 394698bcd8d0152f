#!/usr/bin/env python3
"""locksim robust from real runs.

usage: robust_test.py LOCKSIM SCENARIO OUTDIR

SCENARIO (tests/scenarios/margin_sidtab.toml): one design whose worst IRQs-off section is a
policy reload's SID table conversion. Its figure F is measured with `locksim run`.
1. A limit 3% above F: the design meets it in well under all the worlds, and the sensitivity
   names the family that moves the figure most. Its flip factor is checked with two plain runs
   with [prices] set to that family's factor a little beyond and a little short of it: over the
   limit beyond, within it short of it.
2. A limit 10x above F: met in every world (16 of 16), no sensitivity line.
3. Byte-identical files and table for the same seed and worlds (--no-wall-clock, -j 1 against
   the default), and the same table when robust judges its own results.json again.
4. robust.json: every world's prices and how its figures were obtained; the shares agree with
   the table. A world that ran has its run's figure; a world re-priced has the nominal run's
   recorded sections priced again, computed here from results.json; every run's recorded
   sections reach its worst figures.
5. Estimates, early stops, full runs: --no-estimates runs every world (those far over the limit
   stopped early), --full-runs every world to its end; both judge every world as the estimates
   did, and --full-runs says how far re-pricing lay from its runs.
"""
import json
import os
import re
import subprocess
import sys

from cli_check import expect, fail, run

LABEL = "rwlock@5.9"
WORLDS = 16
FAMILIES = ["work", "memory", "primitive", "grace_period"]


def point_of(prices):
    return {f"prices.{k}": f"{v:.4f}" for k, v in prices.items()}


def repriced(run, group, prices):
    """The worst of a run's recorded items of `group` with each family's time times its factor."""
    priced = run["priced"]
    expect(priced["families"] == FAMILIES, f"priced families {priced['families']}")
    return max(item[0] + sum((prices[f] - 1) * t for f, t in zip(FAMILIES, item[1:]))
               for item in priced[group]["items"])


def check_recorded(runs):
    """Every run's longest recorded section and commit is its worst figure."""
    for r in runs:
        for group, figure in (("preempt_off", r["preempt_off"]["max_ns"]),
                              ("irqs_off", r["irqs_off"]["max_ns"]),
                              ("toggle", r["toggle"]["max_ns"])):
            items = r["priced"][group]["items"]
            longest = items[0][0] if items else 0
            expect(longest == figure, f"{r['label']} seed {r['seed']} {r['point']}: the longest "
                   f"recorded {group} item is {longest} ns, its worst figure {figure} ns")
            expect(r["priced"][group]["count"] >= len(items), f"{group}: count below the items")


def irqs_off(locksim, scenario, out, prices=None):
    """The worst IRQs-off section (ns) of a plain run, with [prices] set as given."""
    with open(scenario) as f:
        text = f.read()
    name = "nominal" if not prices else "-".join(f"{k}{v}" for k, v in prices.items())
    path = os.path.join(out, f"{name}.toml")
    with open(path, "w") as f:
        f.write(text)
        if prices:
            f.write("\n[prices]\n" + "".join(f"{k} = {v}\n" for k, v in prices.items()))
    run([locksim, "run", path, "-q", "-o", os.path.join(out, f"run-{name}")])
    with open(os.path.join(out, f"run-{name}", "results.json")) as f:
        return max(r["irqs_off"]["max_ns"] for r in json.load(f)["runs"])


def share_of(text, label):
    """(met, of) for every limit together, from the design's table line."""
    m = re.search(rf"^{re.escape(label)}\s+(\d+)/(\d+) ", text, re.M)
    expect(m, f"no table line for {label}", text)
    return int(m.group(1)), int(m.group(2))


def main():
    locksim, scenario, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    nominal = irqs_off(locksim, scenario, out)
    expect(nominal > 0, "no IRQs-off section in the nominal run")

    # 1. A few percent under the limit.
    limit_ns = int(nominal * 1.03)
    base = [locksim, "robust", scenario, "--worlds", str(WORLDS), "--no-wall-clock",
            "--max-irqs-off", f"{limit_ns}ns"]
    text = run(base + ["-o", os.path.join(out, "near")])
    met, of = share_of(text, LABEL)
    expect(of == WORLDS, f"{of} worlds judged, {WORLDS} drawn", text)
    expect(0 < met <= WORLDS * 3 // 4,
           f"a design 3% under its limit meets it in {met} of {of} worlds", text)
    m = re.search(rf"^  {re.escape(LABEL)} irqs-off: .*\n    (\w+)\s+elasticity ([+-][\d.]+), "
                  r"moves it up to x([\d.]+) over the range; its verdict flips at \w+ x([\d.]+)",
                  text, re.M)
    expect(m, "no sensitivity line naming the deciding family and its flip factor", text)
    family, elasticity, flip = m.group(1), float(m.group(2)), float(m.group(4))
    expect(elasticity > 0.3, f"the deciding family {family} has elasticity {elasticity}", text)
    # The flip factor, checked by running the scenario with the family's prices either side.
    beyond = irqs_off(locksim, scenario, out, {family: round(flip * 1.08, 4)})
    short = irqs_off(locksim, scenario, out, {family: round(flip * 0.92, 4)})
    expect(beyond > limit_ns, f"{family} x{flip * 1.08:.3f}: {beyond} ns, within the limit "
           f"{limit_ns} ns although past the flip factor x{flip}", text)
    expect(short <= limit_ns, f"{family} x{flip * 0.92:.3f}: {short} ns, over the limit "
           f"{limit_ns} ns although short of the flip factor x{flip}", text)

    # 4. robust.json.
    with open(os.path.join(out, "near", "robust.json")) as f:
        rj = json.load(f)
    expect(len(rj["worlds"]) == WORLDS, "robust.json does not hold every world")
    for w in rj["worlds"]:
        expect(set(w["prices"]) == set(FAMILIES), f"a world's prices lack a family: {w['prices']}")
        expect(w["how"] in ("full runs", "re-priced from the nominal runs: " + LABEL),
               f"a world obtained as {w['how']!r}")
    share = [s for s in rj["shares"] if s["label"] == LABEL][0]
    expect(share["meets_all"] == met and share["worlds"] == of,
           f"robust.json's share {share['meets_all']}/{share['worlds']} is not the table's")
    lo, hi = share["interval"]
    expect(lo <= met / of <= hi and hi - lo > 0.1, f"interval {lo}-{hi} around {met}/{of}")
    # Every world's figure is the one its run gave, or the nominal run's re-priced.
    with open(os.path.join(out, "near", "results.json")) as f:
        runs = json.load(f)["runs"]
    check_recorded(runs)
    nominal_run = [r for r in runs if set(r["point"].values()) == {"1.0000"}]
    expect(len(nominal_run) == 1, f"{len(nominal_run)} nominal runs of one design, one seed")
    estimated = 0
    for w in rj["worlds"]:
        cell = w["designs"][LABEL]
        want = [r["irqs_off"]["max_ns"] for r in runs if r["point"] == point_of(w["prices"])]
        expect(len(want) == (0 if cell["estimated"] else 1),
               f"world {w['prices']} ({w['how']}) has {len(want)} runs")
        if cell["estimated"]:
            estimated += 1
            want = [round(repriced(nominal_run[0], "irqs_off", w["prices"]))]
            expect(want[0] * 1.15 <= limit_ns or want[0] * 0.85 > limit_ns,
                   f"world {w['prices']}: re-priced {want[0]} ns, within 15% of the limit")
        expect(abs(cell["figure"]["irqs_off.max_ns"] - want[0]) <= 1,
               f"world {w['prices']}: robust.json says {cell['figure']}, expected {want[0]}")
    expect(0 < estimated < WORLDS, f"{estimated} of {WORLDS} worlds re-priced", text)
    expect(len(runs) == 1 + WORLDS - estimated, f"{len(runs)} runs")

    # Every world run (--no-estimates), stopping early over 1.5x the limit; every world run to
    # its end (--full-runs): both judge every world as the estimates did.
    every = run(base + ["--no-estimates", "-o", os.path.join(out, "near-every")])
    full = run(base + ["--full-runs", "-o", os.path.join(out, "near-full")])
    expect(share_of(every, LABEL) == (met, of), "--no-estimates judges the worlds otherwise", every)
    expect(share_of(full, LABEL) == (met, of), "--full-runs judges the worlds otherwise", full)
    m = re.search(r"re-pricing alone would have judged (\d+) of them without a run, (\d+) "
                  r"otherwise than the full run", full)
    expect(m and int(m.group(1)) == estimated and m.group(2) == "0",
           f"--full-runs does not say that the {estimated} re-priced worlds were judged right", full)
    with open(os.path.join(out, "near-full", "robust.json")) as f:
        rfull = json.load(f)
    with open(os.path.join(out, "near-every", "robust.json")) as f:
        revery = json.load(f)
    for w, wf in zip(rj["worlds"], rfull["worlds"]):
        expect(w["designs"][LABEL]["meets_all"] == wf["designs"][LABEL]["meets_all"],
               f"world {w['prices']}: the estimate's verdict is not the full run's")
    stopped = 0
    for w, wf in zip(revery["worlds"], rfull["worlds"]):
        cell, cell_full = w["designs"][LABEL], wf["designs"][LABEL]
        expect(cell["meets_all"] == cell_full["meets_all"], f"world {w['prices']}: verdicts differ")
        expect(cell_full["early_stop"] is None, "a run stopped early with --full-runs")
        figure, figure_full = (c["figure"]["irqs_off.max_ns"] for c in (cell, cell_full))
        if cell["early_stop"]:
            stopped += 1
            expect(cell["early_stop"] == "irqs_off.max_ns" and limit_ns * 1.5 < figure <= figure_full,
                   f"world {w['prices']}: stopped at {figure} ns, in full {figure_full} ns")
        else:
            expect(figure == figure_full, f"world {w['prices']}: {figure} ns, in full {figure_full}")
    expect(stopped > 0, "no world stopped early, although some are far over the limit", text)
    # Judged again with a limit above the figures that stopped runs: those worlds say nothing
    # of it (a stopped figure is a lower bound), the others are judged.
    higher = run([locksim, "robust", os.path.join(out, "near-every", "results.json"),
                  "--max-irqs-off", f"{nominal * 10}ns"])
    expect(share_of(higher, LABEL) == (of - stopped, of - stopped),
           f"judged again 10x above: {stopped} stopped worlds should be left out", higher)
    expect("stopped early once a figure passed 1.5x its limit" in every, "no early-stop line",
           every)

    # 2. Far from the limit.
    far = run([locksim, "robust", scenario, "--worlds", str(WORLDS), "--no-wall-clock",
               "--max-irqs-off", f"{nominal * 10}ns"])
    expect(share_of(far, LABEL) == (WORLDS, WORLDS), "a design 10x under its limit", far)
    expect("sensitivity: no design comes within" in far, "a sensitivity line far from the limit",
           far)

    # 3. Byte-identical.
    again = run(base + ["-j", "1", "-o", os.path.join(out, "near-j1")])
    expect(again == text.replace(os.path.join(out, "near"), os.path.join(out, "near-j1")),
           "the table differs with -j 1", again)
    for name in ("results.json", "robust.json"):
        with open(os.path.join(out, "near", name)) as a, \
                open(os.path.join(out, "near-j1", name)) as b:
            expect(a.read() == b.read(), f"{name} differs between two runs of the same worlds")
    rejudged = run([locksim, "robust", os.path.join(out, "near", "results.json"),
                    "--max-irqs-off", f"{limit_ns}ns"])
    strip = lambda t: [l for l in t.splitlines() if not l.startswith("results:")]
    expect(strip(rejudged) == strip(text), "judging results.json again gives another table",
           rejudged)
    # The report draws robust.json: a share bar per design and limit, a tornado bar per family
    # of the fitted figure, the limit in both; also from a robust.json judged again elsewhere.
    run([locksim, "report", os.path.join(out, "near", "robust.json"), "-o",
         os.path.join(out, "report")])
    with open(os.path.join(out, "report", "robust-shares.svg")) as f:
        svg = f.read()
    expect('id="share-0-0"' in svg and 'id="share-1-0"' in svg,
           "robust-shares.svg lacks the design's bars (every limit, irqs-off)")
    with open(os.path.join(out, "report", "robust-sensitivity.svg")) as f:
        svg = f.read()
    expect('id="tornado-0-0"' in svg and 'id="limit-line-0"' in svg,
           "robust-sensitivity.svg lacks the deciding family's bar or the limit")
    with open(os.path.join(out, "report", "index.html")) as f:
        expect("robust-shares.png" in f.read(), "index.html does not show robust-shares")
    run([locksim, "robust", os.path.join(out, "near", "results.json"), "--max-irqs-off",
         f"{limit_ns}ns", "-o", os.path.join(out, "again")])
    run([locksim, "report", os.path.join(out, "again", "robust.json"), "-o",
         os.path.join(out, "report-again")])
    expect(os.path.exists(os.path.join(out, "report-again", "robust-shares.svg")),
           "no report from a robust.json judged again")

    # Shards: three slices merged are the whole file byte for byte, judged the same; --slurm
    # writes an array job of robust shards and a merge job that judges the merged file.
    shard_files = []
    for i in range(3):
        d = os.path.join(out, f"shard{i}")
        run(base + ["--shard", f"{i}/3", "-o", d])
        shard_files.append(os.path.join(d, "results.json"))
    merged = os.path.join(out, "merged.json")
    run([locksim, "merge", merged] + shard_files)
    with open(merged) as a, open(os.path.join(out, "near-every", "results.json")) as b:
        expect(a.read() == b.read(), "three shards merged differ from the whole robust run")
    expect(strip(run([locksim, "robust", merged, "--max-irqs-off", f"{limit_ns}ns"])) == strip(every),
           "the merged shards are judged otherwise")
    dry = run(base + ["--slurm", "--shards", "4", "--dry-run", "-o", os.path.join(out, "slurm")])
    expect(" robust " in dry.split("--shard auto -q")[0] and "--array=0-3" in dry
           and re.search(r"merge .*&&\n  exec .* 'robust' .*results.json' '-o' .*'--max-irqs-off'",
                         dry),
           "robust --slurm does not write robust shards and a merge job that judges", dry)

    # 5. A results file robust did not write, and a scenario that sets [prices] itself.
    p = subprocess.run([locksim, "robust", os.path.join(out, "run-nominal", "results.json"),
                        "--max-irqs-off", "50us"], capture_output=True, text=True)
    expect(p.returncode == 2 and "not a results file `locksim robust` wrote" in p.stderr,
           "robust on a plain run's results", p.stdout + p.stderr)
    p = subprocess.run([locksim, "robust", os.path.join(out, f"{family}{round(flip * 1.08, 4)}.toml"),
                        "--max-irqs-off", "50us"], capture_output=True, text=True)
    expect(p.returncode == 2 and "the scenario sets [prices]" in p.stderr,
           "robust on a scenario with [prices]", p.stdout + p.stderr)
    # Every design of the main job records the sections and commits its worst figures come from.
    default = os.path.join(os.path.dirname(os.path.abspath(scenario)), "..", "..", "scenarios",
                           "default.toml")
    run([locksim, "robust", default, "--worlds", "2", "--duration", "150ms", "--seed", "1",
         "--max-preempt-off", "100us", "--full-runs", "-o", os.path.join(out, "default")])
    with open(os.path.join(out, "default", "results.json")) as f:
        default_runs = json.load(f)["runs"]
    expect(len(default_runs) == 3 * 7, f"{len(default_runs)} runs of 7 designs in 3 worlds")
    check_recorded(default_runs)
    print(f"robust: {met}/{of} worlds under a limit 3% above {nominal} ns; {family} decides "
          f"(elasticity {elasticity:+.2f}, flips at x{flip}: {short} ns short of it, {beyond} ns "
          f"beyond); {estimated} worlds re-priced, {stopped} stopped early without estimates")


if __name__ == "__main__":
    main()
