"""One validation path: every scenario that `compare` refuses, `scenario check` refuses with the
same one-line message and exit status 2. The scenarios of tests/scenarios/broken/ (refused when
loaded) and tests/scenarios/refused/ (refused when a run sets up its machine and workloads on
the policy) say on their first line what to expect ("# expect: FILE:LINE:COLUMN: message"); the
other files given are refusals whose message tests/cli checks.

usage: refusals_test.py LOCKSIM OUT_DIR FILE...
"""
import os
import shutil
import subprocess
import sys

locksim, out, files = sys.argv[1], sys.argv[2], sys.argv[3:]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)

failures = []
for i, path in enumerate(files):
    with open(path) as f:
        first = f.readline()
    expect = None
    if first.startswith("# expect: "):
        expect = os.path.join(os.path.dirname(path), first[len("# expect: "):].rstrip("\n"))
    said = {}
    for command in (["scenario", "check", path], ["compare", path, "-q", "-o", f"{out}/{i}"]):
        r = subprocess.run([locksim] + command, capture_output=True, text=True)
        lines = r.stderr.splitlines()
        if r.returncode != 2 or len(lines) != 1 or not lines[0].startswith("locksim: "):
            failures.append(f"{path}: {command[0]}: exit {r.returncode}, stderr:\n{r.stderr}")
            continue
        said[command[0]] = lines[0][len("locksim: "):]
    if len(said) == 2 and said["scenario"] != said["compare"]:
        failures.append(f"{path}: scenario check says\n  {said['scenario']}\ncompare says\n  "
                        f"{said['compare']}")
    if expect and said.get("compare") and not said["compare"].startswith(expect):
        failures.append(f"{path}: compare says\n  {said['compare']}\nexpected\n  {expect}")

print(f"{len(files)} scenarios, each refused by scenario check and compare alike"
      if not failures else "\n".join(failures))
sys.exit(1 if failures else 0)
