#!/usr/bin/env python3
"""Ctrl-C on a real locksim process (SIGINT, as a terminal sends it).

usage: interrupt_test.py LOCKSIM SCENARIO OUTDIR

1. A sweep of many runs, one at a time, interrupted once its handler is in place: exit status
   130, one line saying how many runs were kept, and a results file holding exactly those runs
   with "complete": false.
2. A single run interrupted while it runs: the run finishes, nothing is lost, so the exit
   status is 0, "complete" is true and nothing says "interrupted".
"""
import json
import os
import signal
import subprocess
import sys
import time


def sigint_caught(pid):
    """True once the process has a SIGINT handler (bit 2 of SigCgt in /proc)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)) != 0
    except FileNotFoundError:
        pass
    return False


def start(cmd):
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_handler(proc):
    while not sigint_caught(proc.pid):
        if proc.poll() is not None:
            sys.exit(f"locksim ended before installing its SIGINT handler: {proc.communicate()}")
        time.sleep(0.005)


def fail(msg):
    print(msg)
    sys.exit(1)


def main():
    locksim, scenario, out = sys.argv[1:4]
    seeds = [str(s) for s in range(1, 41)]
    partial = os.path.join(out, "partial")
    proc = start([locksim, "sweep", scenario, "-q", "-j", "1", "-o", partial, "--seed", *seeds])
    wait_for_handler(proc)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate()
    total = 2 * 2 * len(seeds)  # sweep points x strategies x seeds
    if proc.returncode != 130:
        fail(f"interrupted sweep: exit status {proc.returncode}, expected 130\n{stderr}")
    with open(os.path.join(partial, "results.json")) as f:
        results = json.load(f)
    kept = len(results["runs"])
    if results["scenario"].get("complete") is not False:
        fail("interrupted sweep: the results file does not say \"complete\": false")
    if kept >= total:
        fail(f"interrupted sweep: {kept} runs kept, but the sweep has only {total}")
    expected = f"interrupted: {kept} of {total} runs finished and were kept"
    # The scenario's notes (its periods in step with the probe's) come before it.
    if [l for l in stderr.splitlines() if not l.startswith("note: ")] != [expected]:
        fail(f"interrupted sweep: stderr is {stderr!r}, expected {expected!r}")

    # One run: once it has started, SIGINT lets it finish, and then nothing was lost. (Should
    # the signal come before the run started, nothing ran: that must then say so.)
    whole = os.path.join(out, "whole")
    proc = start([locksim, "run", scenario, "-q", "-o", whole, "--duration", "400ms"])
    wait_for_handler(proc)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate()
    with open(os.path.join(whole, "results.json")) as f:
        results = json.load(f)
    ran = len(results["runs"])
    complete = results["scenario"].get("complete")
    if ran == 1 and (proc.returncode != 0 or "interrupted" in stderr or complete is not True):
        fail(f"a finished run: exit status {proc.returncode}, complete {complete}, "
             f"stderr {stderr!r}")
    if ran == 0 and (proc.returncode != 130 or complete is not False):
        fail(f"a run that never started: exit status {proc.returncode}, complete {complete}")
    print(f"ok: {kept} of {total} runs kept after SIGINT; the single run: {ran} kept")


if __name__ == "__main__":
    main()
