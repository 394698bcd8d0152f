#!/usr/bin/env python3
"""Where call_rcu callbacks run, from real runs of a design that frees with call_rcu: by default
in RCU_SOFTIRQ (the CPUs' softirq time grows by the callbacks' work), with machine.rcu_nocbs in
the rcuo kthread (no softirq time at all, the machine having no interrupt load). In softirq
context they run as the kernel's rcu_core, which names their sections and has an operation of
its own. The machine has no interrupt source, yet its CPUs spend interrupt time: the scheduler
tick and the hrtimer interrupts that wake the sleepers take it from the tasks they interrupt.

usage: rcu_callbacks_test.py LOCKSIM OUTDIR
"""
import json
import os
import subprocess
import sys

locksim, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)


def run(name, nocbs, extra=""):
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
{extra}""")
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
if "rcu_core" not in softirq["detail"]["ops"]:
    failures.append(f"default: no rcu_core operation: {sorted(softirq['detail']['ops'])}")
elif softirq["detail"]["ops"]["rcu_core"]["completed"] < 1:
    failures.append(f"default: rcu_core never completed: {softirq['detail']['ops']['rcu_core']}")
if not any(s["label"] == "rcu_core" and s["task"].startswith("softirq/")
           for s in softirq["detail"]["preempt_off"]["longest"]):
    failures.append("default: no preempt-off section of softirq context named rcu_core")
if "rcu_core" in rcuo["detail"]["ops"]:
    failures.append("rcu_nocbs: an rcu_core operation (the callbacks belong to rcuo)")
# The tick (1.6 us on x86-modern) and the hrtimer wake-ups (0.8 us): interrupt time without
# any [[machine.irq]] source, once tasks run across ticks and sleep between calls (the commits
# alone start on the tick that ends their grace period and are done before the next).
busy = run("busy", False, '[[workload]]\nkind = "syscalls"\ntasks = 2\n')
ticks_busy = busy["detail"]["cpus"][0]["busy_ns"] // 4_000_000
if busy["cpu"]["irq_ns"] < 1600 * max(1, ticks_busy // 2):
    failures.append(f"busy: too little interrupt time from ticks and timers: {busy['cpu']}, "
                    f"{ticks_busy} ticks' worth of busy time on CPU 0")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"ok: callbacks' softirq time {softirq['cpu']['softirq_ns']} ns by default, 0 with rcu_nocbs;"
      f" tick and timer interrupts {busy['cpu']['irq_ns']} ns with system calls")
