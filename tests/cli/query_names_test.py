#!/usr/bin/env python3
"""`locksim query --names` against `locksim query` on the same line of a Debian policy: both exit
0, and each vector's names are as many as its bits set, the bits no permission of the class has
written as their hex values. (The vectors themselves are checked against libsepol in
tests/services/query_test.cpp; nothing here is pinned to one Debian release.)

usage: query_names_test.py LOCKSIM POLICY
"""
import subprocess
import sys

locksim, policy = sys.argv[1:3]
line = "av staff_u:staff_r:staff_t:s0 system_u:object_r:etc_t:s0 file\n"


def query(*extra):
    proc = subprocess.run([locksim, "query", "--policy", policy, *extra], input=line,
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        sys.exit(f"query {' '.join(extra)}: exit status {proc.returncode}\n{proc.stderr}")
    return dict(field.split("=", 1) for field in proc.stdout.split())


hex_fields, named = query(), query("--names")
problems = []
for key in ("allowed", "auditallow", "auditdeny"):
    bits = int(hex_fields[key], 16)
    names = [n for n in named[key].split(",") if n]
    if len(names) != bin(bits).count("1"):
        problems.append(f"{key}: {len(names)} names for {hex_fields[key]}: {named[key]}")
    unnamed = {int(n, 16) for n in names if n.startswith("0x")}
    if any(bits & b != b or bin(b).count("1") != 1 for b in unnamed):
        problems.append(f"{key}: {sorted(unnamed)} are not bits of {hex_fields[key]}")
    if key == "allowed" and (not names or unnamed):
        problems.append(f"allowed: expected named permissions, got '{named[key]}'")
if problems:
    sys.exit("\n".join(problems))
print("ok:", " ".join(f"{k}={named[k]}" for k in ("allowed", "auditallow", "auditdeny")))
