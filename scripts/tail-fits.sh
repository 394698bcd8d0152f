#!/bin/bash
# How often the tail estimate (analysis/tail.h) gives a number on the shipped scenarios.
#
# Runs every scenarios/*.toml (not scenarios/repro) at its own duration with `locksim compare`,
# one run at a time, and asks `locksim pick` for the probe wake-up and preempt-off tail
# estimates at p=1e-6 and p=1e-9 of every run (each seed's runs are judged on their own, so
# one estimate per run, metric and probability). Prints, per scenario and in all, how many
# estimates give a number and how many do not, with the reasons given. A run without the metric
# (no probe task) is not counted.
#
#   scripts/tail-fits.sh [-b LOCKSIM] [-o DIR] [SCENARIO.toml ...]
#
# Results are kept in DIR (default build/tail-fits) and reused: a scenario whose
# DIR/<name>/results.json exists is not run again, so a change to the fit is measured again
# in seconds. Delete DIR to simulate afresh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/dev/cli/locksim
out=$root/build/tail-fits
while getopts "b:o:" opt; do
    case $opt in
        b) bin=$OPTARG ;;
        o) out=$OPTARG ;;
        *) echo "usage: $0 [-b LOCKSIM] [-o DIR] [SCENARIO.toml ...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then set -- "$root"/scenarios/*.toml; fi
mkdir -p "$out"
for scenario in "$@"; do
    name=$(basename "$scenario" .toml)
    dir=$out/$name
    if [ ! -f "$dir/results.json" ]; then
        echo "running $name ..." >&2
        "$bin" compare "$scenario" -j 1 -q -o "$dir" >"$dir.log" 2>&1 ||
            { echo "$name: compare failed (see $dir.log)" >&2; continue; }
    fi
done
python3 - "$bin" "$out" "$@" <<'PY'
import collections, json, os, re, subprocess, sys
bin, out, scenarios = sys.argv[1], sys.argv[2], sys.argv[3:]
total = collections.Counter()
reasons = collections.Counter()
line_re = re.compile(r"^\s+(preempt-off|probe wake-up) at p=(\S+) per \S+: (.*)$")
for scenario in scenarios:
    name = os.path.splitext(os.path.basename(scenario))[0]
    path = os.path.join(out, name, "results.json")
    if not os.path.exists(path):
        continue
    results = json.load(open(path))
    seeds = sorted({r["seed"] for r in results["runs"]})
    counts = collections.Counter()
    for seed in seeds:
        one = dict(results)
        one["runs"] = [r for r in results["runs"] if r["seed"] == seed]
        seed_path = os.path.join(out, name, f"seed-{seed}.json")
        with open(seed_path, "w") as f:
            json.dump(one, f)
        for p in ("1e-6", "1e-9"):
            text = subprocess.run([bin, "pick", seed_path, "--max-probe-wakeup", f"60s@{p}",
                                   "--max-preempt-off", f"60s@{p}"],
                                  capture_output=True, text=True).stdout
            for line in text.splitlines():
                m = line_re.match(line)
                if not m:
                    continue
                metric, _, rest = m.groups()
                if rest.startswith("no estimate (too few observations (0;"):
                    continue  # the run has no such metric (no probe task)
                if rest.startswith("no estimate ("):
                    why = re.sub(r"[0-9.]+", "N", rest[len("no estimate ("):].split("): cannot")[0])
                    counts[(metric, p, False)] += 1
                    reasons[(metric, why)] += 1
                else:
                    counts[(metric, p, True)] += 1
    cells = []
    for metric in ("probe wake-up", "preempt-off"):
        for p in ("1e-6", "1e-9"):
            ok, bad = counts[(metric, p, True)], counts[(metric, p, False)]
            cells.append(f"{metric} {p}: {ok}/{ok + bad}")
    print(f"{name:<20} " + ", ".join(cells))
    total.update(counts)
ok = sum(v for (m, p, good), v in total.items() if good)
all_ = sum(total.values())
print(f"in all: {ok} of {all_} estimates give a number ({100 * ok / max(all_, 1):.0f}%)")
for metric in ("probe wake-up", "preempt-off"):
    for p in ("1e-6", "1e-9"):
        good, bad = total[(metric, p, True)], total[(metric, p, False)]
        print(f"  {metric} at p={p}: {good} of {good + bad}")
for (metric, why), v in reasons.most_common():
    print(f"  no number, {metric}: {v} x {why}")
PY
