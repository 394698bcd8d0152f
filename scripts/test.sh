#!/usr/bin/env bash
# Runs every locksim test: installs what is missing, then, in this order,
#   1. each parser under libFuzzer for a bounded time (clang, ASan + UBSan);
#   2. the real-thread tests under ThreadSanitizer;
#   3. a plain Release build: the benchmarks run once each at minimal time, the torture
#      test's broken strategy must be caught by the platform's own check (no sanitizer there),
#      and the documentation's console sessions print what they show (the README's worked
#      example at its full size);
#   4. everything built under AddressSanitizer and UndefinedBehaviorSanitizer, the whole suite
#      with ctest but the benchmark smoke runs and the full-size documentation check (its
#      summary is the last thing printed).
# Each stage's ctest summary is printed; the exit status is non-zero when any stage failed.
# Safe to run again.
#
# The slow parts run scaled down so that the whole takes under 30 minutes on 2 cores;
# LOCKSIM_FULL_TESTS=1 runs them at full size (fuzzing 60 s per parser instead of 10, the
# libsepol oracle's full query sets).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
# How long each stage took, printed before the ASan suite runs (the whole must fit in 30
# minutes on 2 cores).
timings=()
stage_start=0
stage_done() {
  timings+=("$(printf '%-40s %5d s' "$1" $((SECONDS - stage_start)))")
  stage_start=$SECONDS
}
scripts/setup.sh all
stage_done "0. setup (packages, policies)"
jobs=$(nproc)
status=0
fuzz_seconds=10
[ "${LOCKSIM_FULL_TESTS:-0}" = 1 ] && fuzz_seconds=60
# The sanitizer builds keep line tables only (-g1): enough for every sanitizer's stack trace,
# and much less for the compiler and the linker to write than full debug information.
lines_only=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
# These builds are compiled once and thrown away: unity builds (a few sources per compiler run)
# share the parsing and the template code of the common headers, about half the compile time of
# the sanitizer builds. The developer builds keep one object per source.
unity=(-DCMAKE_UNITY_BUILD=ON)

# 1. The parsers under libFuzzer.
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${lines_only[@]}" "${unity[@]}" \
  -DLOCKSIM_FUZZ=ON -DLOCKSIM_TESTS=OFF -DLOCKSIM_BENCH=OFF \
  -DLOCKSIM_FUZZ_SECONDS="$fuzz_seconds" >/dev/null
cmake --build build/fuzz -j "$jobs" --target fuzz_all
(cd build/fuzz && ctest -L fuzz --output-on-failure --timeout 900) || status=$?
stage_done "1. fuzzing (build and run)"

# 2. The real-thread platform under ThreadSanitizer (tests labelled 'tsan').
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${lines_only[@]}" "${unity[@]}" \
  -DLOCKSIM_SANITIZE=thread -DLOCKSIM_BENCH=OFF >/dev/null
cmake --build build/tsan -j "$jobs" --target tsan_tests
(cd build/tsan && ctest -j "$jobs" -L tsan --no-tests=error --output-on-failure --timeout 900) ||
  status=$?
stage_done "2. ThreadSanitizer (build and run)"

# 3. Release, no sanitizer: the benchmark smoke runs, the plain-build torture catch and the
# documentation's outputs at the documented settings (too slow under the sanitizers).
cmake -S . -B build/test-release -G Ninja -DCMAKE_BUILD_TYPE=Release "${unity[@]}" \
  -DLOCKSIM_BENCH=ON >/dev/null
cmake --build build/test-release -j "$jobs" --target real_tests real_primitives_bench \
  bench_services sim_bench bench_policydb locksim
(cd build/test-release &&
  ctest -R 'bench_smoke|TortureDeathTest|^docs\.shown_outputs$' --no-tests=error \
    --output-on-failure --timeout 900) || status=$?
stage_done "3. Release benchmarks, docs (build, run)"

# 4. The whole suite under ASan + UBSan (the benchmarks are built and run in stage 3); its
# summary is the last thing printed.
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${lines_only[@]}" \
  "${unity[@]}" -DLOCKSIM_SANITIZE=address,undefined -DLOCKSIM_BENCH=OFF >/dev/null
cmake --build build/asan -j "$jobs"
stage_done "4. ASan + UBSan build"
# The times so far; the ASan suite's own is ctest's "Total Test time", and its summary stays the
# last thing printed.
printf '\ntime per stage\n'
printf '  %s\n' "${timings[@]}"
(cd build/asan && ctest -j "$jobs" -LE docs_full --output-on-failure --timeout 900) || status=$?

exit $status
