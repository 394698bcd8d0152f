#!/usr/bin/env python3
"""The main job's path, as a user runs it, on scenarios/default.toml shortened (50 ms, a 5 ms
warm-up, two seeds, a commit every 10 ms; three of its designs): `compare`, then `pick`, then
`report`, each checked against the run's own results.json:

- compare: every column of the table is the run's own figure, recomputed here from the
  histograms in each run's detail (percentiles by the documented rule: the midpoint of the
  log-linear bucket holding the rank, within [min, max]) and combined over the seeds as
  documented (the worst seed's value; ops/s the lowest), to the table's printed precision;
- pick: each design's verdict is what its figures say against the limits (every limited figure
  at most its limit, no self-check violation), the design picked meets them, the exit status is
  0, and the figures pick prints are those of results.json;
- report: every figure figures.json lists and every image index.html shows exists and is not
  empty, and the count the command prints is the files written.

usage: main_job_test.py LOCKSIM DEFAULT_TOML OUTDIR
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tomllib

locksim, default_toml, out = sys.argv[1:4]
designs = ["rwlock", "rcu-cond-dup", "seqlock"]
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def run(*args, expect=0):
    proc = subprocess.run([locksim, *args], capture_output=True, text=True, timeout=900)
    if proc.returncode != expect:
        sys.exit(f"locksim {' '.join(args)}: exit status {proc.returncode}, expected {expect}\n"
                 f"{proc.stdout}{proc.stderr}")
    return proc.stdout


# The shortened scenario: the shipped file with four values replaced, checked by reading it back.
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
text = open(default_toml).read()
for key, value in [("duration", '"50ms"'), ("warmup", '"5ms"'), ("seeds", "2"),
                   ("period", '"10ms"')]:
    # `period` of the setsebool workload only: the first assignment after its kind.
    if key == "period":
        text, n = re.subn(r'(kind = "setsebool"[^\[]*?\nperiod = )"[^"]*"', rf"\g<1>{value}", text)
    else:
        text, n = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, count=1, flags=re.M)
    if n != 1:
        sys.exit(f"{default_toml}: no '{key}' to shorten; update this test")
scenario = tomllib.loads(text)
setsebool = [w for w in scenario["workload"] if w["kind"] == "setsebool"]
if (scenario["duration"], scenario["seeds"], setsebool[0]["period"]) != ("50ms", 2, "10ms"):
    sys.exit(f"the shortened scenario is not what was asked: {scenario}")
short = os.path.join(out, "default-short.toml")
open(short, "w").write(text)

# --- compare ---
table = run("compare", short, "-o", os.path.join(out, "compare"), "-s", *designs)
results = json.load(open(os.path.join(out, "compare", "results.json")))
runs = results["runs"]
check(sorted({r["label"] for r in runs}) == sorted(designs), f"designs {[r['label'] for r in runs]}")
check(len(runs) == 2 * len(designs), f"{len(runs)} runs, expected two seeds of each design")

# Histograms as record/histogram.h documents them: values below 256 exact; above, each power of
# two split into 128 buckets; a percentile is the midpoint of the bucket holding its rank.


def bucket_low(i):
    if i < 256:
        return i
    e = (i - 256) // 128 + 1
    return ((i - 256) % 128 + 128) << e


def bucket_high(i):
    return i if i < 256 else bucket_low(i) + (1 << ((i - 256) // 128 + 1)) - 1


def merged(hists):
    buckets, lo, hi = {}, None, 0
    for h in hists:
        if not h or h["count"] == 0:
            continue
        for i, n in h["buckets"]:
            buckets[i] = buckets.get(i, 0) + n
        lo = h["min"] if lo is None else min(lo, h["min"])
        hi = max(hi, h["max"])
    return {"buckets": sorted(buckets.items()), "min": lo or 0, "max": hi,
            "count": sum(buckets.values())}


def percentile(h, p):
    if h["count"] == 0:
        return 0
    rank = max(1, math.ceil(p / 100 * h["count"]))
    seen = 0
    for i, n in h["buckets"]:
        seen += n
        if seen >= rank:
            mid = bucket_low(i) + (bucket_high(i) - bucket_low(i)) // 2
            return min(max(mid, h["min"]), h["max"])
    return h["max"]


def reader_op(label):
    kind = label.split(".")[0]
    return "." in label and kind not in ("setsebool", "load_policy", "probe")


def figures(r):
    """The table's columns of one run, from its detail alone."""
    d = r["detail"]
    po = d["preempt_off"]["length_ns"]
    io = d["irqs_off"]["length_ns"]
    probe = merged(d["wakeup_latency_ns"].values())
    commit = d["ops"].get("set_bools", {}).get("latency_ns", {"count": 0})
    reader = merged(op["latency_ns"] for label, op in d["ops"].items() if reader_op(label))
    measured_s = d["duration_ns"] / 1e9  # the measured part: the run after its warm-up
    return {"preempt-off worst": po["max"], "preempt-off p99": percentile(po, 99),
            "irqs-off worst": io["max"], "probe worst": probe["max"],
            "probe p99": percentile(probe, 99),
            "toggle p50": percentile(commit, 50) if commit["count"] else None,
            "toggle worst": commit["max"] if commit["count"] else None,
            "reader p99": percentile(reader, 99), "ops/s": reader["count"] / measured_s}


columns = ["preempt-off worst", "preempt-off p99", "irqs-off worst", "probe worst", "probe p99",
           "toggle p50", "toggle worst", "reader p99", "ops/s"]
expected = {}
for name in designs:
    per_seed = [figures(r) for r in runs if r["label"] == name]
    row = {}
    for c in columns:
        values = [f[c] for f in per_seed if f[c] is not None]
        row[c] = None if not values else (min(values) if c == "ops/s" else max(values))
    expected[name] = row
check(any(expected[n]["toggle worst"] for n in designs), "no design committed: no toggle column")

units = {"ns": 1, "us": 1e3, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9}


def parse_ns(cell):
    """A printed duration and half its last digit's unit: the printed precision."""
    m = re.fullmatch(r"\u2265?([0-9.]+)(ns|us|\u00b5s|ms|s)", cell)
    if not m:
        return None, None
    digits = m.group(1)
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    unit = units[m.group(2)]
    return float(digits) * unit, 0.5 * unit * 10 ** -decimals


lines = table.splitlines()
head = next((i for i, l in enumerate(lines) if l.startswith("strategy ")), None)
check(head is not None and "preempt-off" in lines[head - 1] and "toggle" in lines[head - 1],
      f"no table heading in:\n{table}")
rows = {}
for line in lines[(head or 0) + 2:]:
    cells = line.split()
    if not cells or cells[0] not in designs:
        break
    rows[cells[0]] = cells[1:]
check(sorted(rows) == sorted(designs), f"table rows {sorted(rows)}")
for name, cells in rows.items():
    for c, cell in zip(columns, cells):
        want = expected[name][c]
        where = f"{name} {c}: table '{cell}', results.json {want}"
        if want is None:
            check(cell == "-", where)
        elif c == "ops/s":
            check(cell.isdigit() and abs(int(cell) - want) <= 1, where)
        else:
            got, half = parse_ns(cell)
            check(got is not None and abs(got - want) <= half + 1e-6, where)

# --- pick ---
limits = {"preempt_off": 100_000, "toggle": 100_000_000}  # ns: --max-preempt-off 100us ...
meets = {}
for name in designs:
    these = [r for r in runs if r["label"] == name]
    worst_po = max(r["preempt_off"]["max_ns"] for r in these)
    worst_toggle = max(r["toggle"]["max_ns"] for r in these)
    check(worst_po == expected[name]["preempt-off worst"], f"{name}: preempt_off.max_ns")
    meets[name] = (worst_po <= limits["preempt_off"] and worst_toggle <= limits["toggle"] and
                   sum(r["violations"] for r in these) == 0 and
                   not any(r["toggle"]["incomplete"] for r in these))
check(any(meets.values()), f"no design meets the limits: {meets}")
check(not all(meets.values()), f"every design meets the limits, the test shows no failure: {meets}")
verdict = run("pick", os.path.join(out, "compare", "results.json"), "--max-preempt-off", "100us",
              "--max-toggle", "100ms", expect=0)
m = re.search(r"^pick: (\S+)$", verdict, re.M)
check(m is not None and meets.get(m.group(1)), f"pick chose {m and m.group(1)}; meets {meets}")
for name in designs:
    m = re.search(rf"^ *\d+\. {re.escape(name)} +(meets the limits|over a limit)", verdict, re.M)
    check(m is not None and (m.group(1) == "meets the limits") == meets[name],
          f"{name}: pick says '{m and m.group(1)}', its figures say meets={meets[name]}")
    shown = re.search(r"preempt-off (\S+) (<=|>) ", verdict[m.end():] if m else "")
    got, half = parse_ns(shown.group(1)) if shown else (None, None)
    want = expected[name]["preempt-off worst"]
    check(got is not None and abs(got - want) <= half + 1e-6,
          f"{name}: pick prints preempt-off {shown and shown.group(1)}, results.json {want}")

# --- report ---
report_dir = os.path.join(out, "report")
said = run("report", os.path.join(out, "compare", "results.json"), "-o", report_dir)
m = re.search(r"report: (\d+) files", said)
written = sorted(os.listdir(report_dir))
check(m is not None and int(m.group(1)) == len(written),
      f"report says '{said.strip()}', wrote {len(written)} files")
listed = json.load(open(os.path.join(report_dir, "figures.json")))["figures"]
check(len(listed) >= 2 * len(runs), f"{len(listed)} figures for {len(runs)} runs")
html = open(os.path.join(report_dir, "index.html")).read()
shown = set(re.findall(r'src="([^"]+)"', html))
wanted = {f["file"] + ext for f in listed for ext in (".png", ".svg")} | shown
for name in sorted(wanted):
    path = os.path.join(report_dir, name)
    check(os.path.isfile(path) and os.path.getsize(path) > 0, f"report: {name} missing or empty")
for f in listed:
    check(f["file"] + ".png" in shown, f"index.html does not show {f['file']}.png")

if problems:
    sys.exit("\n".join(problems))
print(f"ok: {len(runs)} runs; table, pick and {len(wanted)} report files agree with results.json")
