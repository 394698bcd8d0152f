"""What the command-line tests share: run a command and fail with its output."""
import subprocess
import sys


def fail(msg):
    print(msg)
    sys.exit(1)


def run(cmd, expect_rc=0):
    """The command's standard output; fails unless it exits with expect_rc."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != expect_rc:
        fail(f"{' '.join(cmd)}: exit status {p.returncode}, expected {expect_rc}\n"
             f"{p.stdout}{p.stderr}")
    return p.stdout


def expect(cond, what, text=""):
    if not cond:
        fail(f"{what}\n--- output ---\n{text}")
