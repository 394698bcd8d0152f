#!/usr/bin/env python3
"""Frees as the kernel frees: a policy's destroy is charged under its own label (results.json
detail.compute_ns), and its time grows with the policy's object count (policydb_destroy frees object by object, v5.10 and v5.9 ss/policydb.c),
as does the conditional duplicate's (cond_policydb_destroy_dup); a real run of two synthetic
policies, one with four times the types (and so about four times the rules) of the other.

usage: frees_test.py LOCKSIM OUTDIR
"""
import json
import os
import subprocess
import sys

locksim, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
scenario = os.path.join(out, "frees.toml")
with open(scenario, "w") as f:
    f.write("""name = "frees"
duration = "60ms"
warmup = "0ms"
strategies = ["rwlock", "rcu-cond-dup"]
[machine]
cpus = 2
[policy]
source = "synthetic"
[[workload]]
kind = "load_policy"
period = "20ms"
[[workload]]
kind = "setsebool"
period = "10ms"
[sweep]
"policy.synthetic.types" = [500, 2000]
""")
subprocess.run([locksim, "sweep", scenario, "-q", "--no-wall-clock", "-o",
                os.path.join(out, "run")], check=True, capture_output=True)
runs = json.load(open(os.path.join(out, "run", "results.json")))["runs"]

failures = []
# Per destroy: a load frees the old policy and its SID table (policydb_destroy, sidtab_destroy),
# a commit of rcu-cond-dup the old conditional state (cond_policydb_destroy_dup).
per = {}
for r in runs:
    types = r["point"]["policy.synthetic.types"]
    ops, compute = r["detail"]["ops"], r["detail"]["compute_ns"]
    for label, op in [("policydb_destroy", "load_policy"), ("sidtab_destroy", "load_policy"),
                      ("cond_policydb_destroy_dup", "set_bools")]:
        done = ops.get(op, {}).get("completed", 0)
        if label in compute and done:
            per[(r["label"], label, types)] = compute[label] / done

ratios = {}
for label, what in [("rwlock", "policydb_destroy"), ("rcu-cond-dup", "policydb_destroy"),
                    ("rcu-cond-dup", "cond_policydb_destroy_dup")]:
    small, large = per.get((label, what, "500")), per.get((label, what, "2000"))
    if not small or not large:
        failures.append(f"{label}: no {what} in both runs: {per}")
        continue
    ratios[(label, what)] = large / small
    if not 2.5 < large / small < 6:
        failures.append(f"{label} {what}: {small:.0f} ns -> {large:.0f} ns per call "
                        f"(x{large / small:.2f}), want about x4")
for label in ("rwlock", "rcu-cond-dup"):
    if (label, "sidtab_destroy", "500") not in per:
        failures.append(f"{label}: a load frees the old SID table (sidtab_destroy): {per}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok: " + ", ".join(f"{l} {o} x{x:.2f}" for (l, o), x in ratios.items()))
