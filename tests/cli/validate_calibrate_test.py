#!/usr/bin/env python3
"""`locksim validate --calibrate`: the host is calibrated before every round, and each round's
simulated runs are priced with the profile calibrated just before it.

From a real run of two rounds (quick calibrations, short runs, no host load so the simulated side
depends on the profile and the seed alone): validate.json lists both calibrations, -o holds both
profiles, and the simulator's figures of round 2 are those a plain validate gets with round 2's
profile file on its round 2 (the same seed), and not those it gets with round 1's. The reader's
operation is timed against the calibration of its own round.

usage: validate_calibrate_test.py LOCKSIM SCENARIO OUTDIR
"""
import json
import os
import subprocess
import sys

locksim, scenario, out = sys.argv[1:4]
common = ["--rounds", "2", "--duration-ms", "20", "--no-host-load"]


def validate(outdir, *args):
    proc = subprocess.run([locksim, "validate", scenario, *args, *common, "-o", outdir],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        sys.exit(f"validate {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    with open(os.path.join(outdir, "validate.json")) as f:
        return json.load(f), proc.stdout


def sim_round(doc, i):
    """Every strategy's simulated figures of round i (0-based): what the profile decides."""
    return {name: (s["read_section"]["p50"]["rounds"][i]["sim"],
                   s["read_section"]["p99"]["rounds"][i]["sim"],
                   s["commit"]["mean"]["rounds"][i]["sim"],
                   s["throughput"]["reads_per_s"]["rounds"][i]["sim"])
            for name, s in doc["strategies"].items()}


fails = []
cal_dir = os.path.join(out, "calibrated")
doc, stdout = validate(cal_dir, "--calibrate", "--quick")
cals = doc.get("calibrations", [])
if [c.get("round") for c in cals] != [1, 2]:
    fails.append(f"validate.json's calibrations are not rounds 1 and 2: {cals}")
profiles = [os.path.join(cal_dir, c.get("profile", "")) for c in cals]
for p in profiles:
    if not os.path.isfile(p):
        fails.append(f"the round's profile {p} was not written")
if "fitted to this host before every round" not in stdout:
    fails.append("the header does not say the host was calibrated before every round")

# Each timing of the reader's operation is against its own round's calibration.
op = doc["host_drift"]["reader_op"]
if op.get("known"):
    by_round = {c["round"]: c.get("reader_op_ns") for c in cals}
    for t in op["rounds"]:
        if t["calibrated_ns"] != by_round.get(t["round"]):
            fails.append(f"a timing of round {t['round']} is against {t['calibrated_ns']} ns, "
                         f"its round's calibration recorded {by_round.get(t['round'])}")

if not fails:
    # The same rounds, plain, with each round's profile.
    with_second, _ = validate(os.path.join(out, "second"), "--profile", profiles[1])
    with_first, _ = validate(os.path.join(out, "first"), "--profile", profiles[0])
    got, second, first = sim_round(doc, 1), sim_round(with_second, 1), sim_round(with_first, 1)
    if got != second:
        fails.append(f"round 2's simulated figures are not those of round 2's profile:\n"
                     f"  --calibrate: {got}\n  its profile: {second}")
    if second == first:
        fails.append("the two calibrations give the same simulated figures: the test cannot "
                     "tell which profile a round used")
    elif got == first:
        fails.append("round 2 was priced with round 1's profile")
    # Round 1 is priced with round 1's profile.
    if sim_round(doc, 0) != sim_round(with_first, 0):
        fails.append("round 1's simulated figures are not those of round 1's profile")

if fails:
    print("FAIL:\n" + "\n".join(fails))
    sys.exit(1)
print("ok: each round's simulated runs use the profile calibrated before it "
      f"({len(doc['strategies'])} strategies, 2 rounds)")
