#!/usr/bin/env bash
# The main job: installs what is missing, builds locksim (release) and runs it on the built
# Debian policies. Safe to run again.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/setup.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSIM_TESTS=OFF \
  -DLOCKSIM_BENCH=OFF >/dev/null
cmake --build build/release -j "$(nproc)" --target locksim
locksim=build/release/cli/locksim
for p in default mls; do
  "$locksim" policy info ".cache/policies/$p.policy.33"
done
