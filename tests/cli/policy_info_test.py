#!/usr/bin/env python3
"""`locksim policy info` on a shipped Debian policy, as a user runs it, against libsepol's own
reading of the same file (the sepol_counts tool, tests/cli/sepol_counts_main.c): every count of
the text and JSON output, and the type -> attribute fan-out (types, mean, max; its percentiles in
order). Nothing is pinned to one Debian release: the counts are whatever libsepol reads.

usage: policy_info_test.py LOCKSIM SEPOL_COUNTS POLICY
"""
import json
import re
import subprocess
import sys

locksim, sepol_counts, policy = sys.argv[1:4]
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def run(*args):
    proc = subprocess.run(list(args), capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit status {proc.returncode}\n{proc.stdout}{proc.stderr}")
    return proc.stdout


theirs = json.loads(run(sepol_counts, policy))
ours = json.loads(run(locksim, "policy", "info", policy, "--json", "--fan-out"))
text = run(locksim, "policy", "info", policy, "--fan-out")

check(ours["version"] == theirs["version"], f"version {ours['version']} != {theirs['version']}")
counts = theirs["counts"]
check(len(counts) >= 40, f"libsepol gave only {len(counts)} counts")
for key, value in counts.items():
    check(ours.get(key) == value, f"{key}: locksim says {ours.get(key)}, libsepol {value}")
    m = re.search(rf"^  {re.escape(key)} +(\d+)$", text, re.M)
    check(m is not None and int(m.group(1)) == value,
          f"{key}: the text says {m.group(1) if m else 'nothing'}, libsepol {value}")

fo = theirs.get("fan_out")
check(fo is not None and fo["domains"] > 0, "libsepol finds no attribute domain")
if fo:
    ofo = ours["fan_out"]
    check(ofo["domains_by"] == "attribute domain", f"domains by {ofo['domains_by']}")
    for part, n, total, top, heading in [("domains", "domains", "domain_sum", "domain_max",
                                          "domains"),
                                         ("others", "others", "other_sum", "other_max",
                                          "other types")]:
        o = ofo[part]
        check(o["types"] == fo[n], f"fan_out.{part}.types {o['types']} != {fo[n]}")
        check(round(o["mean"] * o["types"]) == fo[total],
              f"fan_out.{part}.mean {o['mean']} x {o['types']} != {fo[total]}")
        check(o["max"] == fo[top], f"fan_out.{part}.max {o['max']} != {fo[top]}")
        check(1 <= o["p50"] <= o["p90"] <= o["p99"] <= o["max"], f"fan_out.{part}: {o}")
        line = (rf"^  {heading} +{fo[n]} types, mean {fo[total] / fo[n]:.2f}, "
                rf"p50 {o['p50']}, p90 {o['p90']}, p99 {o['p99']}, max {fo[top]}; ")
        check(re.search(line, text, re.M) is not None, f"no line matching '{line}' in:\n{text}")
if problems:
    sys.exit("\n".join(problems))
print(f"ok: {len(counts)} counts and the fan-out agree with libsepol")
