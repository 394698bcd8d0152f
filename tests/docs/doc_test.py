#!/usr/bin/env python3
"""Runs the commands the documentation shows and checks what they print.

A fenced block whose first line starts with "$ " is a console session: each "$ " line is a
command (a line ending in a backslash continues on the next), the lines after it up to the next
"$ " line are what it prints on standard output. A line "..." stands for any number of lines.
The blocks of all files run in one shell per block, in order, in a scratch directory that holds
links to the repository's scenarios/, profiles/ and tests/ and to the built policies as
.cache/policies, so that paths such as results/default/results.json are the ones shown; a block
may use what an earlier block wrote.

Full mode (the default) compares every line, figures included: the counted model is a function
of (scenario, seed, binary), so the output is the same on every run. --short DURATION runs every
`locksim compare`, `run` and `sweep` that sets no duration of its own for that simulated time
(one seed, two where the table shows a `seeds` column, unless it names its seeds) and checks
only the tables' structure (their header lines and the row labels in order); the other commands
must still succeed. --update rewrites each
block's output in the files from a full run (blocks with "..." are left alone and reported when
they no longer match).

README.md is checked further: every command in a code block that is not a console session must
be named below with how it is covered, and every `locksim` command of its command table and
every option they and the run/compare/sweep paragraph name must exist in the command's --help.
"""

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARK = "@@doc-test-status@@"

# Commands in README blocks that are not console sessions, with how the test covers them.
README_OTHER_COMMANDS = {
    "scripts/main.sh": "its locksim commands are the worked example's (checked against main.sh)",
    "scripts/test.sh": "the test command, which runs this test",
}


class Block:
    def __init__(self, path, line, fence_lines):
        self.path = path
        self.line = line  # 1-based line of the opening fence
        self.lines = fence_lines  # the lines between the fences
        self.commands = []  # (command text, [expected lines], index of first output line)
        if not fence_lines or not fence_lines[0].startswith("$ "):
            return
        i = 0
        while i < len(fence_lines):
            assert fence_lines[i].startswith("$ ")
            cmd = fence_lines[i][2:]
            while cmd.endswith("\\") and i + 1 < len(fence_lines):
                i += 1
                cmd = cmd[:-1] + "\n" + fence_lines[i]
            i += 1
            start = i
            while i < len(fence_lines) and not fence_lines[i].startswith("$ "):
                i += 1
            self.commands.append((cmd, [l.rstrip() for l in fence_lines[start:i]], start))

    def is_session(self):
        return bool(self.commands)

    def where(self):
        return f"{self.path}:{self.line}"


def read_blocks(path):
    blocks = []
    with open(path, encoding="utf-8") as f:
        text = f.read().split("\n")
    i = 0
    while i < len(text):
        if text[i].startswith("```"):
            j = i + 1
            while j < len(text) and not text[j].startswith("```"):
                j += 1
            blocks.append(Block(path, i + 1, text[i + 1 : j]))
            i = j
        i += 1
    return blocks


def matches(expected, got):
    """expected may hold "..." lines, each matching any number of lines of got."""
    memo = {}

    def m(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(expected):
            r = j == len(got)
        elif expected[i] == "...":
            r = any(m(i + 1, k) for k in range(j, len(got) + 1))
        else:
            r = j < len(got) and expected[i] == got[j] and m(i + 1, j + 1)
        memo[(i, j)] = r
        return r

    return m(0, 0)


def table_structure(lines):
    """The header lines and the row labels of each table (a table: the lines above a line of
    dashes, which are its header, and the rows below it up to a blank line)."""
    out = []
    for k, line in enumerate(lines):
        if re.fullmatch(r"-{20,}", line):
            h = k
            while h > 0 and lines[h - 1].strip():
                h -= 1
            out.append(("header", tuple(lines[h:k])))
            r = k + 1
            labels = []
            while r < len(lines) and lines[r].strip() and lines[r] != "...":
                labels.append(lines[r].split()[0])
                r += 1
            out.append(("rows", tuple(labels)))
    return out


SIM_COMMANDS = re.compile(r"^(locksim (?:compare|run|sweep) )(.*)$", re.S)


def shorten(cmd, duration, expected=()):
    # A command that sets its own duration is short already: it runs as shown.
    if not SIM_COMMANDS.match(cmd) or "--duration" in cmd:
        return cmd, False
    # Unless the command names its seeds: two where the shown table has a `seeds` column (it
    # shows with more than one), else one, so that the tables keep their rows and columns.
    multi = any(re.search(r"\bseeds$", line) for line in expected)
    seed = "" if "--seed" in cmd else (" --seed 1 --seed 2" if multi else " --seed 1")
    return f"{cmd} --duration {duration}{seed}", True


def run_block(block, args, work, env):
    """Runs the block's commands in one shell; returns [(stdout lines, status)] and stderr."""
    script = ["set +e"]
    for cmd, expected, _ in block.commands:
        if args.short:
            cmd, _ = shorten(cmd, args.short, expected)
        script.append(cmd)
        script.append(f"printf '\\n{MARK} %d\\n' $?")
    p = subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True)
    results = []
    rest = p.stdout
    for _ in block.commands:
        head, sep, tail = rest.partition("\n" + MARK + " ")
        if not sep:
            break
        status, _, rest = tail.partition("\n")
        lines = head.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        results.append(([l.rstrip() for l in lines], int(status)))
    return results, p.stderr


def allowed_status(cmd, status):
    # pick's exit status 3 (no design meets the limits) is an answer, not a failure.
    return status == 0 or (status == 3 and cmd.lstrip().startswith("locksim pick"))


def check_sessions(files, args, work, env):
    failures = 0
    updates = {}  # path -> list of (first line index in file, old length, new lines)
    for path in files:
        for block in read_blocks(path):
            if not block.is_session():
                continue
            results, stderr = run_block(block, args, work, env)
            for n, (cmd, expected, first) in enumerate(block.commands):
                where = f"{block.path}:{block.line + 1 + first - 1}"
                if n >= len(results):
                    print(f"FAIL {where}: `{cmd}` did not finish (the shell stopped)\n{stderr}")
                    failures += 1
                    break
                got, status = results[n]
                if not allowed_status(cmd, status):
                    print(f"FAIL {where}: `{cmd}` exited {status}\n{stderr}")
                    failures += 1
                    continue
                if args.short:
                    if not shorten(cmd, args.short)[1]:
                        print(f"ok   {where}: `{cmd}` ran (exit {status})")
                        continue
                    want, have = table_structure(expected), table_structure(got)
                    if want != have:
                        print(f"FAIL {where}: `{cmd}` at --duration {args.short} prints "
                              "tables of another shape than the documentation's:")
                        for line in difflib.unified_diff([repr(x) for x in want],
                                                         [repr(x) for x in have],
                                                         "documented", "printed", lineterm=""):
                            print("  " + line)
                        failures += 1
                    else:
                        print(f"ok   {where}: `{cmd}` (shortened) has the documented tables "
                              f"({len(want) // 2} tables)")
                    continue
                if matches(expected, got):
                    print(f"ok   {where}: `{cmd}` prints what is shown ({len(got)} lines)")
                    continue
                if args.update and "..." not in expected:
                    updates.setdefault(path, []).append((block.line + first, len(expected), got))
                    print(f"updated {where}: `{cmd}`")
                    continue
                print(f"FAIL {where}: `{cmd}` prints something else than what is shown "
                      "(- shown, + printed):")
                for line in difflib.unified_diff(expected, got, "shown", "printed",
                                                 lineterm="", n=1):
                    print("  " + line)
                failures += 1
    for path, edits in updates.items():
        with open(path, encoding="utf-8") as f:
            text = f.read().split("\n")
        for start, old_len, new in sorted(edits, reverse=True):
            text[start : start + old_len] = new
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(text))
    return failures


def help_text(locksim, words):
    p = subprocess.run([locksim, *words, "--help"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        return None
    return p.stdout


def check_readme_commands(readme, locksim, source):
    """The command table's synopses and the run/compare/sweep paragraph's options."""
    failures = 0
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    rows = re.findall(r"^\| `(locksim [^`]*)` \|", text, re.M)
    if not rows:
        print(f"FAIL {readme}: no command table (rows starting with | `locksim ...` |)")
        return 1
    for synopsis in rows:
        words = synopsis.replace("\\|", "|").split()[1:]
        sub = words[0]
        top = help_text(locksim, [sub])
        if top is None:
            print(f"FAIL {readme}: `locksim {sub} --help` fails: no such command")
            failures += 1
            continue
        helps = [top]
        before = failures
        # `policy info|convert|gen`, `list strategies|workloads|...`: each alternative is a
        # subcommand (its options are searched too) or a value the command's help names.
        if len(words) > 1 and "|" in words[1]:
            for alt in words[1].split("|"):
                h = help_text(locksim, [sub, alt])
                if h is not None and h != top:
                    helps.append(h)
                elif not re.search(rf"\b{re.escape(alt)}\b", top):
                    print(f"FAIL {readme}: `locksim {sub} --help` does not name `{alt}`")
                    failures += 1
        for opt in re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", synopsis):
            if not any(re.search(rf"(?<![\w-]){re.escape(opt)}\b", h) for h in helps):
                print(f"FAIL {readme}: `{synopsis}`: {opt} is not in `locksim {sub} --help`")
                failures += 1
        if failures == before:
            print(f"ok   {readme}: `{synopsis}`")
    para = re.search(r"^`run`, `compare` and `sweep` take (.*?)\n\n", text, re.M | re.S)
    if not para:
        print(f"FAIL {readme}: no paragraph on what `run`, `compare` and `sweep` take")
        return failures + 1
    opts = sorted(set(re.findall(r"`(--?[a-z][a-z0-9-]*)", para.group(1)) +
                      re.findall(r"\[(--[a-z][a-z0-9-]*)", para.group(1)) +
                      re.findall(r"\| (--[a-z][a-z0-9-]*)", para.group(1))))
    for sub in ("run", "compare", "sweep"):
        h = help_text(locksim, [sub]) or ""
        for opt in opts:
            if not re.search(rf"(?<![\w-]){re.escape(opt)}\b", h):
                print(f"FAIL {readme}: {opt} (run, compare and sweep take it) is not in "
                      f"`locksim {sub} --help`")
                failures += 1
    print(f"ok   {readme}: run, compare and sweep take {' '.join(opts)}")
    return failures


def check_readme_blocks(readme, source):
    failures = 0
    for block in read_blocks(readme):
        if block.is_session():
            continue
        for line in block.lines:
            key = line.split()[0] if line.split() else ""
            if not key:
                continue
            if key not in README_OTHER_COMMANDS:
                print(f"FAIL {block.where()}: `{line}`: a command outside a console session "
                      "(\"$ command\" then its output) that the doc test does not know")
                failures += 1
                continue
            print(f"ok   {block.where()}: `{key}`: {README_OTHER_COMMANDS[key]}")
    # scripts/main.sh is the worked example: the commands the README runs in its place.
    with open(os.path.join(source, "scripts/main.sh"), encoding="utf-8") as f:
        main = f.read()
    sessions = [c for b in read_blocks(readme) for c, _, _ in b.commands]
    for want, how in (("compare scenarios/default.toml", r'compare scenarios/default\.toml'),
                      ("pick --max-preempt-off 100us --max-toggle 10ms",
                       r'pick "\$out/results\.json" --max-preempt-off 100us --max-toggle 10ms')):
        if not re.search(how, main):
            print(f"FAIL scripts/main.sh no longer runs `{want}` as the README's example does")
            failures += 1
        if not any(want.split()[0] in c and want.split()[-1] in c for c in sessions):
            print(f"FAIL {readme}: the worked example no longer shows `locksim {want}`")
            failures += 1
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--locksim", required=True)
    ap.add_argument("--source", required=True, help="the repository's root")
    ap.add_argument("--policy-dir", required=True)
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--short", metavar="DURATION")
    ap.add_argument("--update", action="store_true")
    ap.add_argument("files", nargs="+", help="Markdown files, relative to --source")
    args = ap.parse_args()
    if args.update and args.short:
        ap.error("--update needs the full run")
    locksim = os.path.abspath(args.locksim)
    source = os.path.abspath(args.source)
    work = tempfile.mkdtemp(prefix="locksim-doc-test-")
    for name in ("scenarios", "profiles", "tests"):
        os.symlink(os.path.join(source, name), os.path.join(work, name))
    os.makedirs(os.path.join(work, ".cache"))
    os.symlink(os.path.abspath(args.policy_dir), os.path.join(work, ".cache", "policies"))
    bindir = os.path.join(work, "bin")
    os.makedirs(bindir)
    os.symlink(locksim, os.path.join(bindir, "locksim"))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    env.pop("LOCKSIM_POLICY_DIR", None)
    files = [os.path.join(source, f) for f in args.files]
    failures = 0
    readme = os.path.join(source, "README.md")
    if readme in files and not args.update:
        failures += check_readme_blocks(readme, source)
        failures += check_readme_commands(readme, locksim, source)
    failures += check_sessions(files, args, work, env)
    if failures or args.keep:
        print(f"scratch directory kept: {work}")
    else:
        shutil.rmtree(work)
    if failures:
        print(f"{failures} difference(s) between the documentation and what locksim does")
        if not args.short and not args.update:
            print("If the change is meant: scripts/update-doc-outputs.sh rewrites the shown "
                  "outputs from real runs (then check the prose that cites them).")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
