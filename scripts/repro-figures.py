#!/usr/bin/env python3
"""The figures of docs/reproductions.md rows 5 and 6 from a sweep's results.json.

  scripts/repro-figures.py avc-call-cost results/avc-call-cost/results.json
  scripts/repro-figures.py kaigai results/kaigai-avc-scaling/results.json
"""
import json
import sys


def rw(run):
    return run["detail"]["ops"]["syscalls.read_write"]


def avc_call_cost(runs):
    rows = {}
    for r in runs:
        p = r["point"]
        key = (p["machine.profile"], p["workload.syscalls.checks"], p["core.avc_audit"],
               p["core.avc_slow_path"], p["core.file_hook"])
        rows[key] = rw(r)["latency_ns"]["mean"]
    # Before: 2.6.22 (audit always, avc_has_perm_noaudit out of line, the nested hook); after:
    # all three changes of the 2007 patch.
    print("profile     avc_audit avc_slow_path file_hook  without  with  added  overhead")
    for prof in ["x86-modern", "arm-xscale", "sh4"]:
        base = rows[(prof, "false", "always", "outline", "nested")]
        for audit in ["always", "needed"]:
            for path in ["outline", "inline"]:
                for hook in ["nested", "flat"]:
                    m = rows[(prof, "true", audit, path, hook)]
                    print(f"{prof:11s} {audit:9s} {path:13s} {hook:9s} {base:7.0f} {m:6.0f}"
                          f" {m - base:6.0f}  {100 * (m - base) / base:6.1f} %")


def kaigai(runs):
    rows = {}
    for r in runs:
        p = r["point"]
        rows[(int(p["machine.cpus"]), p["workload.syscalls.checks"], p["core.avc_lock"])] = r
    print("cpus  off ops/s    spinlock/off  rwlock/off  rcu/off   (spinlock wait, ms)")
    for cpus in sorted({k[0] for k in rows}):
        off = rows[(cpus, "false", "rcu")]["throughput"]["ops_per_sec"]
        ratios = [off / rows[(cpus, "true", lock)]["throughput"]["ops_per_sec"]
                  for lock in ["spinlock", "rwlock", "rcu"]]
        wait = rows[(cpus, "true", "spinlock")]["detail"]["locks"]["avc_lock"]["exclusive"]
        print(f"{cpus:4d} {off:11.0f}   {ratios[0]:11.2f} {ratios[1]:11.2f} {ratios[2]:8.2f}"
              f"   {wait['wait_ns']['sum'] / 1e6:.1f}")


if __name__ == "__main__":
    which, path = sys.argv[1], sys.argv[2]
    runs = json.load(open(path))["runs"]
    {"avc-call-cost": avc_call_cost, "kaigai": kaigai}[which](runs)
