#!/usr/bin/env bash
# Runs every locksim test: installs what is missing, builds under AddressSanitizer and
# UndefinedBehaviorSanitizer, runs the whole suite with ctest, then the ThreadSanitizer build of
# the real-thread tests and a bounded libFuzzer run of each parser. Safe to run again.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/setup.sh
jobs=$(nproc)

# 1. The whole suite under ASan + UBSan.
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLOCKSIM_SANITIZE=address,undefined -DLOCKSIM_BENCH=ON >/dev/null
cmake --build build/asan -j "$jobs"
status=0
(cd build/asan && ctest -j "$jobs" --output-on-failure --timeout 900) || status=$?

# 2. The real-thread platform under ThreadSanitizer (tests labelled 'tsan').
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLOCKSIM_SANITIZE=thread -DLOCKSIM_BENCH=OFF >/dev/null
if (cd build/tsan && ctest -N -L tsan | grep -q 'Total Tests: [1-9]'); then
  cmake --build build/tsan -j "$jobs"
  (cd build/tsan && ctest -j "$jobs" -L tsan --output-on-failure --timeout 900) || status=$?
fi

# 3. The parsers under libFuzzer for a bounded time each (clang, ASan + UBSan).
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLOCKSIM_FUZZ=ON -DLOCKSIM_TESTS=OFF -DLOCKSIM_BENCH=OFF >/dev/null
cmake --build build/fuzz -j "$jobs"
(cd build/fuzz && ctest -L fuzz --output-on-failure --timeout 900) || status=$?

exit $status
