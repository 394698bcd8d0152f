#!/usr/bin/env python3
"""Where call_rcu callbacks run, from real runs of a design that frees with call_rcu: by default
in RCU_SOFTIRQ (the CPUs' softirq time grows by the callbacks' work), with machine.rcu_nocbs in
the rcuo kthread (no softirq time at all, the machine having no interrupt load).

usage: rcu_callbacks_test.py LOCKSIM OUTDIR
"""
import json
import os
import subprocess
import sys

locksim, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)


def run(name, nocbs):
    scenario = os.path.join(out, f"{name}.toml")
    with open(scenario, "w") as f:
        f.write(f"""name = "{name}"
duration = "60ms"
warmup = "5ms"
strategies = ["rcu-cond-dup-async"]
[machine]
cpus = 2
rcu_nocbs = {"true" if nocbs else "false"}
[[workload]]
kind = "setsebool"
period = "5ms"
""")
    subprocess.run([locksim, "compare", scenario, "-q", "--no-wall-clock", "-o",
                    os.path.join(out, name)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    runs = json.load(open(os.path.join(out, name, "results.json")))["runs"]
    return runs[0]


failures = []
softirq = run("softirq", False)
rcuo = run("rcuo", True)
for r, name in ((softirq, "softirq"), (rcuo, "rcuo")):
    if r["violations"]:
        failures.append(f"{name}: violations {r['violations']}")
# Every commit frees the old boolean state with call_rcu; each callback costs at least the
# profile's rcu_callback (50 ns on x86-modern), in softirq context by default.
for r, name in ((softirq, "softirq"), (rcuo, "rcuo")):
    if r["detail"]["rcu"]["callbacks_invoked"] < 5:
        failures.append(f"{name}: too few callbacks to tell: {r['detail']['rcu']}")
if softirq["cpu"]["softirq_ns"] < 50 * softirq["detail"]["rcu"]["callbacks_invoked"]:
    failures.append(f"default: softirq time below the callbacks' work: {softirq['cpu']}")
if rcuo["cpu"]["softirq_ns"] != 0:
    failures.append(f"rcu_nocbs: softirq time {rcuo['cpu']} (the callbacks belong to rcuo)")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"ok: callbacks' softirq time {softirq['cpu']['softirq_ns']} ns by default, 0 with rcu_nocbs")
