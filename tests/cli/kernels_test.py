#!/usr/bin/env python3
"""One kernel at a time: `locksim list kernels` says what each release selects, a run records its
design's kernel and what it selected in detail.config, and says when the combination is a kernel
that never existed; a real run shows the SID table era the release selects.

usage: kernels_test.py LOCKSIM OUTDIR
"""
import json
import os
import re
import subprocess
import sys

locksim, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def sweep(name, text):
    """Writes scenario NAME with TEXT, sweeps it, and returns its results' runs."""
    path = os.path.join(out, name + ".toml")
    with open(path, "w") as f:
        f.write(text)
    subprocess.run([locksim, "sweep", path, "-q", "--no-wall-clock", "-o",
                    os.path.join(out, name)], check=True, capture_output=True)
    return json.load(open(os.path.join(out, name, "results.json")))["runs"]


# What each release selects, from docs/kernel-eras.md's boundaries (read in the source at each
# tag): SID table, string cache, freeze, the IMA step.
expected = {
    "4.15": ("legacy", "none", "no", "none"),
    "5.0": ("linear", "none", "no", "none"),
    "5.6": ("hash-string", "256", "no", "none"),
    "5.9": ("hash", "256", "no", "none"),
    "5.10": ("hash", "256", "no", "none"),
    "5.10.30": ("hash", "256", "yes", "none"),
    "5.12": ("hash", "256", "yes", "policy"),
    "6.6": ("hash", "256", "yes", "state+policy"),
}
listed = subprocess.run([locksim, "list", "kernels"], check=True, capture_output=True,
                        text=True).stdout
rows = {}
for line in listed.split("\n\n")[0].splitlines():  # the table, before "read from:"
    cols = line.split()
    if cols and re.fullmatch(r"\d+\.\d+(\.\d+)?", cols[0]) and len(cols) >= 8:
        rows[cols[0]] = tuple(cols[1:4]) + (cols[6],), " ".join(cols[7:]), cols[5]
for release, want in expected.items():
    got = rows.get(release)
    check(got is not None and got[0] == want, f"list kernels, {release}: {got} (want {want})")
    check(got is not None and got[1], f"list kernels, {release}: no commit path")
check("policy_rwlock" in rows.get("5.9", ((), ""))[1] and "RCU" in rows.get("5.10", ((), ""))[1],
      "commit paths: 5.9 under policy_rwlock, 5.10 under RCU")
# The xfrm step's lock: rtnl_lock in v4.15.1's selinux_xfrm_notify_policyload, net_rwsem from 4.17.
xfrm = {release: rows.get(release, ((), "", ""))[2] for release in ("4.15", "5.0", "6.6")}
check(xfrm == {"4.15": "rtnl_lock", "5.0": "net_rwsem", "6.6": "net_rwsem"},
      f"list kernels, xfrm lock: {xfrm}")

# A run: rwlock on its own kernel (5.9), on 4.15, and on 6.6 where it never existed; the SID
# table set against the release in one more design.
scenario = os.path.join(out, "kernels.toml")
with open(scenario, "w") as f:
    f.write("""name = "kernels"
duration = "30ms"
warmup = "5ms"
[machine]
cpus = 2
[[strategy]]
name = "rwlock"
[[strategy]]
name = "rwlock"
kernel = "4.15"
[[strategy]]
name = "rwlock"
kernel = "6.6"
[[strategy]]
name = "rcu-cond-dup"
[[workload]]
kind = "login"
period = "10ms"
users = ["staff_u"]
""")
run = subprocess.run([locksim, "compare", scenario, "-q", "--no-wall-clock", "-o",
                      os.path.join(out, "run")], capture_output=True, text=True)
check(run.returncode == 0, f"compare failed: {run.stderr}")
notes = [l for l in run.stderr.splitlines() if "never existed" in l]
check(len(notes) == 1 and "'rwlock@6.6'" in notes[0] and "rwlock existed in 4.15 - 5.9" in notes[0],
      f"one note, for rwlock on 6.6: {notes}")
res = json.load(open(os.path.join(out, "run", "results.json")))
config = {r["label"]: r["detail"]["config"] for r in res["runs"]}
want = {"rwlock": ("5.9", "hash", "256", "false"), "rwlock@4.15": ("4.15", "legacy", "0", "false"),
        "rwlock@6.6": ("6.6", "hash", "256", "true"), "rcu-cond-dup": ("6.6", "hash", "256", "true")}
for label, (rel, era, cache, freeze) in want.items():
    c = config.get(label, {})
    got = (c.get("kernel"), c.get("kernel.sidtab"), c.get("kernel.sid_string_cache"),
           c.get("kernel.sidtab_freeze"))
    check(got == (rel, era, cache, freeze), f"{label}: detail.config {got}, want {(rel, era, cache, freeze)}")
    check(("kernel.never_existed" in c) == (label == "rwlock@6.6"),
          f"{label}: never_existed {c.get('kernel.never_existed')}")

# The SID table the release selects is the one that ran: on 4.15 get_user_sids scans the table
# for each candidate context under the read lock (v4.15.1 security_get_user_sids ->
# sidtab_context_to_sid), so its section grows with the number of SIDs; on 5.10 each candidate
# is a hash lookup and it does not.
runs = sweep("growth", """name = "growth"
duration = "60ms"
warmup = "5ms"
strategies = ["rwlock"]
[machine]
cpus = 2
[[workload]]
kind = "new_contexts"
rate = 1
preload = 1000
[[workload]]
kind = "login"
period = "10ms"
users = ["staff_u"]
[sweep]
"machine.kernel" = ["4.15", "5.10"]
"workload.new_contexts.preload" = [1000, 2000]
""")
section = {}
for r in runs:
    op = r["detail"]["ops"]["login.get_user_sids"]
    p = r["point"]
    section[(p["machine.kernel"], p["workload.new_contexts.preload"])] = \
        op["preempt_off_ns"] / op["completed"]
old = section[("4.15", "2000")] / section[("4.15", "1000")]
new = section[("5.10", "2000")] / section[("5.10", "1000")]
check(old > 1.6, f"4.15: doubling the SIDs grows get_user_sids' section x{old:.2f}: {section}")
check(new < 1.1, f"5.10: doubling the SIDs grows get_user_sids' section x{new:.2f}: {section}")

# The freeze: 5.10.0 publishes a load without freezing the old SID table (v5.10.13
# selinux_policy_commit), so a new context racing the commit never gets -ESTALE; from 5.10.30 the
# old table is frozen around the publication and such an insert is retried on the new policy.
runs = sweep("race", """name = "race"
duration = "200ms"
warmup = "5ms"
strategies = ["rcu-cond-dup"]
[machine]
cpus = 4
[[workload]]
kind = "new_contexts"
tasks = 3
rate = 50000
preload = 1000
[[workload]]
kind = "load_policy"
period = "10ms"
[sweep]
"machine.kernel" = ["5.10", "5.10.30"]
""")

retries = {r["point"]["machine.kernel"]:
           r["detail"]["ops"].get("sidtab_estale_retry", {}).get("completed", 0) for r in runs}
freezes = {r["point"]["machine.kernel"]:
           r["detail"]["ops"].get("sidtab_freeze", {}).get("completed", 0) for r in runs}
check(retries.get("5.10") == 0 and freezes.get("5.10") == 0,
      f"5.10.0: no freeze, no -ESTALE retry: retries {retries}, freezes {freezes}")
check(retries.get("5.10.30", 0) > 0 and freezes.get("5.10.30", 0) > 0,
      f"5.10.30: the freeze and a retry: retries {retries}, freezes {freezes}")

# A load's xfrm notification takes the release's lock: rtnl_mutex on 4.15, net_rwsem on 5.0.
runs = sweep("xfrm", """name = "xfrm"
duration = "30ms"
warmup = "5ms"
strategies = ["rwlock"]
[machine]
cpus = 2
[[workload]]
kind = "load_policy"
period = "10ms"
[sweep]
"machine.kernel" = ["4.15", "5.0"]
""")
for r in runs:
    locks = r["detail"]["locks"]
    taken = {name: locks[name]["exclusive"]["acquisitions"] + locks[name].get("shared", {}).get(
        "acquisitions", 0) for name in ("rtnl_mutex", "net_rwsem") if name in locks}
    release = r["point"]["machine.kernel"]
    want = "rtnl_mutex" if release == "4.15" else "net_rwsem"
    other = "net_rwsem" if release == "4.15" else "rtnl_mutex"
    check(taken.get(want, 0) > 0 and taken.get(other, 0) == 0,
          f"{release}: the xfrm step's lock acquisitions {taken}, want only {want}")
    check(r["detail"]["config"].get("kernel.xfrm_lock") == ("rtnl_lock" if release == "4.15"
                                                             else "net_rwsem"),
          f"{release}: detail.config kernel.xfrm_lock {r['detail']['config'].get('kernel.xfrm_lock')}")

# The IMA step (machine.ima, CONFIG_IMA): from 5.12 every policy change writes the whole policy
# out (security_read_state_kernel, v5.12.9 and v6.6.0 ima.c), and from 5.13 measures the state
# string first; before 5.12, or without CONFIG_IMA, nothing. Its time per commit grows with the
# policy (four times the types, about four times the rules), and the commit is that much longer.
runs = sweep("ima", """name = "ima"
duration = "60ms"
warmup = "5ms"
strategies = ["rcu-cond-dup"]
[machine]
cpus = 2
[policy]
source = "synthetic"
[[workload]]
kind = "setsebool"
period = "10ms"
[sweep]
"machine.kernel" = ["5.11", "5.12", "6.6"]
"machine.ima" = [false, true]
"policy.synthetic.types" = [500, 2000]
""")
ima = {}
for r in runs:
    p = r["point"]
    key = (p["machine.kernel"], p["machine.ima"], p["policy.synthetic.types"])
    commits = r["detail"]["ops"]["set_bools"]
    compute = r["detail"]["compute_ns"]
    ima[key] = (r["detail"]["config"].get("kernel.ima_measure"),
                compute.get("security_read_state_kernel", 0) / commits["completed"],
                compute.get("selinux_ima_collect_state", 0), commits["latency_ns"]["mean"])
for (release, on, types), (measure, write, state, mean) in ima.items():
    want = "none" if on == "false" or release == "5.11" else \
        "policy" if release == "5.12" else "state+policy"
    check(measure == want, f"IMA {release} ima={on}: kernel.ima_measure {measure}, want {want}")
    check((write > 0) == (want != "none"), f"IMA {release} ima={on}: policy written {write} ns")
    check((state > 0) == (want == "state+policy"), f"IMA {release} ima={on}: state {state} ns")
grows = ima[("6.6", "true", "2000")][1] / max(ima[("6.6", "true", "500")][1], 1)
check(2.5 < grows < 6, f"IMA: the policy written per commit grows x{grows:.2f} with 4x the types")
for types in ("500", "2000"):
    on, off = ima[("6.6", "true", types)], ima[("6.6", "false", types)]
    check(on[3] - off[3] >= 0.9 * on[1],
          f"IMA, {types} types: a commit {on[3] - off[3]:.0f} ns longer with the step, which "
          f"writes {on[1]:.0f} ns")


if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"ok: list kernels, detail.config, the never-existed note; 4.15 x{old:.2f}, "
      f"5.10 x{new:.2f}; -ESTALE retries {retries}; IMA write x{grows:.2f}")
