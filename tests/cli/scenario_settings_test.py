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
[core]
sidtab = "linear"
avc_slots = 256
[[workload]]
kind = "setsebool"
period = "5ms"
[[workload]]
kind = "probe"
period = "700us"
""")
subprocess.run([locksim, "compare", scenario, "-q", "--no-wall-clock", "-o", out], check=True,
               stdout=subprocess.DEVNULL)
sc = json.load(open(os.path.join(out, "results.json")))["scenario"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


m = sc["machine"]
check(m["cpus"] == 3 and m["spinlock"] == "queued" and m["hz"] == 1000, f"machine as set: {m}")
check(m.get("kernel") == "default", f"machine.kernel (default: each design's own): {m}")
for key in ("profile", "preemption", "preempt_rcu", "rt_mutex_pi", "irq"):
    check(key in m, f"machine.{key} (a default) missing: {m}")
check(m.get("rcu_nocbs") is True, f"machine.rcu_nocbs as set: {m}")
check(sc["policy"] == {"source": "debian-default"}, f"policy: {sc['policy']}")
check(sc["core"].get("sidtab") == "linear" and sc["core"].get("avc_slots") == 256,
      f"core as set: {sc['core']}")
# Every [core] key `locksim list core` documents, each with its default where the file is silent.
listed = subprocess.run([locksim, "list", "core"], check=True, capture_output=True,
                        text=True).stdout
keys = re.findall(r"^\s*([a-z_]+)\s", listed, re.M)
check(len(keys) >= 9, f"list core shows no keys: {listed!r}")
for key in keys:
    check(key in sc["core"], f"core.{key} missing from results.json")
check(sc["core"].get("avc_lock") == "rcu" and sc["core"].get("sid_string_cache") == -1,
      f"core defaults: {sc['core']}")
names = [s["name"] for s in sc["strategy_settings"]]
check(names == ["rwlock", "rcu-cond-dup"], f"strategy_settings: {names}")
check(sc["strategies"] == [s["label"] for s in sc["strategy_settings"]], "labels differ")
# Each design's kernel, resolved: the release it existed in when the scenario names none.
kernels = [s.get("kernel") for s in sc["strategy_settings"]]
check(kernels == ["5.9", "6.6"], f"strategy_settings' kernels: {kernels}")
cond_dup = sc["strategy_settings"][1]["options"]
check(cond_dup.get("grace_period") == "normal", f"rcu-cond-dup's options: {cond_dup}")
w = {x["kind"]: x for x in sc["workload_settings"]}
check(w["setsebool"]["params"].get("period") == 5_000_000, f"setsebool: {w['setsebool']}")
check(w["probe"]["params"].get("period") == 700_000, f"probe: {w['probe']}")
# A parameter the file does not set is there with its default.
check(len(w["setsebool"]["params"]) > 1, f"setsebool defaults missing: {w['setsebool']}")
for key in ("duration_ns", "warmup_ns", "drain_ns", "seeds", "cost_model", "measured_scale"):
    check(key in sc, f"{key} missing")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok: every scenario setting is in results.json")
