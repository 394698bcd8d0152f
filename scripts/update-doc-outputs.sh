#!/usr/bin/env bash
# Rewrites what README.md and docs/*.md show a command print (their console blocks: "$ command"
# and its output) from real runs of a Release build: run it after a change that moves the
# simulation's figures, then read the diff and the prose that cites the figures (the worked
# example's "How to read it"). A block with "..." lines is left alone and reported when it no
# longer matches. tests/docs/doc_test.py (ctest -R docs.shown_outputs) checks them.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSIM_TESTS=OFF \
  -DLOCKSIM_BENCH=OFF >/dev/null
cmake --build build/release -j "$(nproc)" --target locksim
locksim=build/release/cli/locksim
policy_dir=$("$locksim" paths | sed -n 's/^policy_dir //p')
python3 tests/docs/doc_test.py --update --locksim "$locksim" --source . \
  --policy-dir "$policy_dir" README.md docs/*.md
git --no-pager diff --stat -- README.md docs
