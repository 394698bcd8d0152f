#!/usr/bin/env python3
"""The stretches that held the CPUs, from a real run, and the probe wake-up pick reads from them.

usage: held_tail_test.py LOCKSIM SCENARIO OUTDIR

Runs SCENARIO (the main job's) for rwlock, seed 5: its login section holds a CPU about 170 us
some 40 times in the run, longer than any of its 7,600 wake-ups waited.
1. Every run records its stretches (detail.cpu_held): some, no more held time than the CPUs
   had, and the longest at least as long as the run's longest preempt-off section (a stretch
   holds every section of its CPU that it overlaps).
2. pick's probe wake-up at a probability where 30 or more stretches are longer than the wait is
   the wait worked out here from the histograms (sum of (S - x)+ = p x the CPU time, plus the
   wake-ups' median): an independent computation of the figure shown.
3. A results file whose stretches are not a histogram: pick and report exit with status 2,
   naming the file (pick) and the run, no crash.
"""
import json
import math
import os
import re
import subprocess
import sys

SUB_BITS = 8
SUB = 1 << SUB_BITS
HALF = SUB // 2


def fail(msg):
    print(msg)
    sys.exit(1)


def bucket_mid(i):
    if i < SUB:
        return i
    rel = i - SUB
    e = rel // HALF + 1
    low = (rel % HALF + HALF) << e
    high = low + (1 << e) - 1
    return low + (high - low) // 2


def values(hist, open_at_end=()):
    """(value, count) at the buckets' midpoints clamped to [min, max], the open ones exact."""
    taken = {}
    for v in open_at_end:
        taken[bucket_index(v)] = taken.get(bucket_index(v), 0) + 1
    out = []
    for i, c in hist["buckets"]:
        c -= min(c, taken.get(i, 0))
        if c:
            out.append((min(max(bucket_mid(i), hist["min"]), hist["max"]), c))
    out += [(v, 1) for v in open_at_end]
    return out


def bucket_index(v):
    if v < SUB:
        return v
    e = v.bit_length() - SUB_BITS
    return SUB + (e - 1) * HALF + ((v >> e) - HALF)


def median(hist):
    target = max(1, math.ceil(0.5 * hist["count"]))
    seen = 0
    for i, c in sorted(hist["buckets"]):
        seen += c
        if seen >= target:
            return min(max(bucket_mid(i), hist["min"]), hist["max"])
    return hist["max"]


def observed_wait(vals, budget):
    """x with sum (S - x)+ = budget, and how many stretches are longer."""
    total, m = 0.0, 0
    for v, c in sorted(vals, reverse=True):
        if m and total - m * v >= budget:
            return (total - budget) / m, m
        total += v * c
        m += c
    return (max(0.0, (total - budget) / m) if m else 0.0), m


def merged(hists):
    out = {"buckets": {}, "count": 0, "min": None, "max": 0}
    for h in hists:
        for i, c in h["buckets"]:
            out["buckets"][i] = out["buckets"].get(i, 0) + c
        out["count"] += h["count"]
        out["min"] = h["min"] if out["min"] is None else min(out["min"], h["min"])
        out["max"] = max(out["max"], h["max"])
    out["buckets"] = sorted(out["buckets"].items())
    return out


def ns_of(text):
    m = re.fullmatch(r"([0-9.]+)(ns|us|ms|s)", text)
    return float(m.group(1)) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]


def human_ns(ns):
    ns = round(ns)
    if ns < 1000:
        return f"{ns}ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.1f}us"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:.2f}ms"
    return f"{ns / 1e9:.2f}s"


def main():
    locksim, scenario, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    results_path = os.path.join(outdir, "results.json")
    subprocess.run([locksim, "compare", scenario, "-s", "rwlock", "--seed", "5", "-j", "1", "-q",
                    "-o", outdir], check=True, capture_output=True)
    results = json.load(open(results_path))
    runs = results["runs"]
    if not runs:
        fail("no runs")
    # 1. The stretches as recorded.
    for k, r in enumerate(runs):
        d = r["detail"]
        if "cpu_held" not in d:
            fail(f"run {k}: no detail.cpu_held ({d.get('cpu_held_absent')})")
        h = d["cpu_held"]["length_ns"]
        cpu_ns = d["duration_ns"] * len(d["cpus"])
        held = sum(v * c for v, c in values(h, d["cpu_held"]["open_at_end_ns"]))
        if h["count"] == 0 or not 0 < held <= cpu_ns:
            fail(f"run {k}: {h['count']} stretches holding {held} ns of {cpu_ns}")
        if h["max"] < r["preempt_off"]["max_ns"]:
            fail(f"run {k}: longest stretch {h['max']} < longest section "
                 f"{r['preempt_off']['max_ns']}")
    # 2. The figure pick shows, worked out here, where the stretches decide it: 30 or more
    # longer than the wait (no fit), and the wait longer than any wake-up seen.
    for p in (1e-4, 5e-5, 3e-5, 2e-5):
        expected, worst = [], []
        for r in runs:
            d = r["detail"]
            vals = values(d["cpu_held"]["length_ns"], d["cpu_held"]["open_at_end_ns"])
            x, longer = observed_wait(vals, p * d["duration_ns"] * len(d["cpus"]))
            wakeups = merged(d["wakeup_latency_ns"].values())
            expected.append((x + median(wakeups), longer, x))
            worst.append(wakeups["max"])
        if all(longer >= 30 and e > w for (e, longer, _), w in zip(expected, worst)):
            break
    else:
        fail(f"no probability with 30 stretches longer than the wait: {expected}")
    out = subprocess.run([locksim, "pick", results_path, "--max-probe-wakeup", f"1s@{p:g}"],
                         capture_output=True, text=True).stdout
    shown = re.findall(r"probe wake-up at p=\S+ per wake-up: (\S+) \(upper bound (\S+), by the "
                       r"stretches that held the CPUs\)", out)
    labels = sorted({r["label"] for r in runs})
    if len(shown) != len(labels):
        fail(f"p={p:g}: {len(shown)} probe estimates from the stretches for {len(labels)} "
             f"designs\n{out}")
    for label, (estimate, high) in zip(
            [m.group(1) for m in re.finditer(r"^ \d+\. (\S+)", out, re.M)], shown):
        mine = [e for (e, _, _), r in zip(expected, runs) if r["label"] == label]
        # pick shows the run with the largest upper bound; observed: the largest estimate.
        want = human_ns(max(mine))
        if estimate != want or high != want:
            fail(f"{label} at p={p:g}: pick shows {estimate} (upper bound {high}), worked out "
                 f"{want} from {mine}\n{out}")
    print(f"p={p:g}: pick's probe wake-ups {shown} as worked out from the stretches")
    # 3. A broken histogram: a clear message, exit status 2.
    broken = json.loads(json.dumps(results))
    broken["runs"][0]["detail"]["cpu_held"]["length_ns"] = "not a histogram"
    path = os.path.join(outdir, "broken.json")
    json.dump(broken, open(path, "w"))
    p2 = subprocess.run([locksim, "pick", path, "--max-probe-wakeup", "1s@1e-6"],
                        capture_output=True, text=True)
    if p2.returncode != 2 or f"{path}: run 0 of the results" not in p2.stderr:
        fail(f"broken stretches: exit status {p2.returncode}\n{p2.stdout}{p2.stderr}")
    print("a broken histogram:", p2.stderr.strip())
    p3 = subprocess.run([locksim, "report", path, "-o", os.path.join(outdir, "report"),
                         "--per-run"], capture_output=True, text=True)
    if p3.returncode != 2 or "run 0" not in p3.stderr or "internal error" in p3.stderr:
        fail(f"report of broken stretches: exit status {p3.returncode}\n{p3.stdout}{p3.stderr}")
    print("report:", p3.stderr.strip())


if __name__ == "__main__":
    main()
