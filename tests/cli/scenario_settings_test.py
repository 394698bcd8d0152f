#!/usr/bin/env python3
"""A results file says what ran: every scenario setting reaches results.json's "scenario" block,
the ones the file sets with their values and the others with their defaults.

usage: scenario_settings_test.py LOCKSIM OUTDIR
"""
import json
import os
import re
import subprocess
import sys

locksim, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
scenario = os.path.join(out, "settings.toml")
with open(scenario, "w") as f:
    f.write("""name = "settings"
duration = "12ms"
warmup = "2ms"
strategies = ["rwlock", "rcu-cond-dup"]
[machine]
cpus = 3
hz = 1000
rcu_nocbs = true
ima = true
[[machine.irq]]
kind = "network"
rate = 1000
handler = "2us"
[prices]
work = 1.5
[core]
sidtab = "linear"
avc_slots = 256
[[workload]]
kind = "setsebool"
period = "5ms"
[[workload]]
kind = "probe"
period = "700us"
[output]
formats = ["json", "csv"]
""")
subprocess.run([locksim, "compare", scenario, "-q", "--no-wall-clock", "-o", out], check=True,
               stdout=subprocess.DEVNULL)
sc = json.load(open(os.path.join(out, "results.json")))["scenario"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


# Each block key by key: what the file sets with its value, the rest with its documented
# default (`locksim list core`, docs/scenarios.md); a key missing or added fails.
expect_top = {
    "name": "settings", "description": "", "file": scenario, "duration_ns": 12_000_000,
    "warmup_ns": 2_000_000, "drain_ns": 1_000_000_000, "seeds": [1], "cost_model": "counted",
    "measured_scale": 1.0, "sweep": {}, "complete": True,
    "prices": {"work": 1.5, "memory": 1.0, "primitive": 1.0, "grace_period": 1.0},
    "output": {"dir": "results/settings", "formats": ["json", "csv"]},
}
for key, value in expect_top.items():
    check(sc.get(key) == value, f"scenario.{key}: {sc.get(key)!r}, expected {value!r}")
blocks = {"machine", "policy", "core", "strategies", "strategy_settings", "workloads",
          "workload_settings"}
check(set(sc) == set(expect_top) | blocks,
      f"scenario keys: {sorted(set(sc) ^ (set(expect_top) | blocks))} differ")
expect_machine = {
    "cpus": 3, "profile": "x86-modern", "preemption": "full", "preempt_rcu": True,
    "rt_mutex_pi": True, "rcu_nocbs": True, "hz": 1000, "ima": True, "kernel": "default",
    "spinlock": "queued",
    "irq": [{"kind": "network", "cpus": [], "rate": 1000, "handler_ns": 2000, "softirq_ns": 0,
             "jitter_ns": 0, "priority": 50}],
}
check(sc["machine"] == expect_machine, f"machine: {sc['machine']}, expected {expect_machine}")
check(sc["policy"] == {"source": "debian-default"}, f"policy: {sc['policy']}")
expect_core = {
    "mls_level_isvalid": "contains", "avc_audit": "needed", "avc_slow_path": "inline",
    "avc_lock": "rcu", "file_hook": "none", "sid_string_cache": -1, "sidtab": "linear",
    "avc_slots": 256, "avc_threshold": 512,
}
check(sc["core"] == expect_core, f"core: {sc['core']}, expected {expect_core}")
# Every [core] key `locksim list core` documents, each with its default where the file is silent.
listed = subprocess.run([locksim, "list", "core"], check=True, capture_output=True,
                        text=True).stdout
keys = re.findall(r"^\s*([a-z_]+)\s", listed, re.M)
check(len(keys) >= 9, f"list core shows no keys: {listed!r}")
for key in keys:
    check(key in sc["core"], f"core.{key} missing from results.json")
for st in sc["strategy_settings"]:
    check(set(st) == {"label", "name", "kernel", "options"}, f"a strategy's keys: {sorted(st)}")
names = [s["name"] for s in sc["strategy_settings"]]
check(names == ["rwlock", "rcu-cond-dup"], f"strategy_settings: {names}")
check(sc["strategies"] == [s["label"] for s in sc["strategy_settings"]], "labels differ")
# Each design's kernel, resolved: the release it existed in when the scenario names none.
kernels = [s.get("kernel") for s in sc["strategy_settings"]]
check(kernels == ["5.9", "6.6"], f"strategy_settings' kernels: {kernels}")
cond_dup = sc["strategy_settings"][1]["options"]
check(cond_dup.get("grace_period") == "normal", f"rcu-cond-dup's options: {cond_dup}")
w = {x["kind"]: x for x in sc["workload_settings"]}
for x in sc["workload_settings"]:
    check(set(x) == {"label", "kind", "tasks", "params"}, f"a workload's keys: {sorted(x)}")
check(w["probe"]["tasks"] == 0 and w["setsebool"]["tasks"] == 1, "workloads' tasks")
check(w["setsebool"]["params"].get("period") == 5_000_000, f"setsebool: {w['setsebool']}")
check(w["probe"]["params"].get("period") == 700_000, f"probe: {w['probe']}")
# Every parameter, the ones the file does not set with their defaults (`list workloads -v`).
expect_setsebool = {
    "mode": "periodic", "period": 5_000_000, "burst": 10, "booleans": 1, "names": [],
    "jitter": 50_000, "tasks": 1, "sched": "other", "prio": 50, "nice": 0, "cpus": [],
    "pin": False, "start": 0, "cluster": "",
}
check(w["setsebool"]["params"] == expect_setsebool,
      f"setsebool: {w['setsebool']['params']}, expected {expect_setsebool}")
expect_probe = {"period": 700_000, "jitter": 0, "tasks": 0, "sched": "fifo", "prio": 99,
                "nice": 0, "cpus": [], "pin": True, "start": 0, "cluster": ""}
check(w["probe"]["params"] == expect_probe,
      f"probe: {w['probe']['params']}, expected {expect_probe}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok: every scenario setting is in results.json")
