#!/usr/bin/env bash
# Runs every locksim test: installs what is missing, runs each parser under libFuzzer for a
# bounded time (clang, ASan + UBSan), the real-thread tests under ThreadSanitizer, then builds
# everything under AddressSanitizer and UndefinedBehaviorSanitizer and runs the whole suite with
# ctest (its summary is the last thing printed). Safe to run again.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/setup.sh
jobs=$(nproc)
status=0

# 1. The parsers under libFuzzer.
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLOCKSIM_FUZZ=ON -DLOCKSIM_TESTS=OFF -DLOCKSIM_BENCH=OFF >/dev/null
cmake --build build/fuzz -j "$jobs" --target fuzz_all
(cd build/fuzz && ctest -L fuzz --output-on-failure --timeout 900) || status=$?

# 2. The real-thread platform under ThreadSanitizer (tests labelled 'tsan').
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLOCKSIM_SANITIZE=thread -DLOCKSIM_BENCH=OFF >/dev/null
cmake --build build/tsan -j "$jobs" --target tsan_tests
(cd build/tsan && ctest -j "$jobs" -L tsan --no-tests=error --output-on-failure --timeout 900) ||
  status=$?

# 3. The whole suite under ASan + UBSan (the benchmarks are built too, so they keep compiling).
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLOCKSIM_SANITIZE=address,undefined -DLOCKSIM_BENCH=ON >/dev/null
cmake --build build/asan -j "$jobs"
(cd build/asan && ctest -j "$jobs" --output-on-failure --timeout 900) || status=$?

exit $status
