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
#
# The 30 minutes are enforced: after setup, each stage runs under `timeout` with what is left of
# LOCKSIM_TEST_BUDGET seconds (default 1800; 0 for no limit). A stage that runs past it is
# stopped, and the command exits 124 naming that stage and the time each stage took.
# Every skipped test is listed with its reason after its stage's summary.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
# How long each stage took, printed before the ASan suite runs and when the budget runs out.
timings=()
stage_start=0
stage_done() {
  timings+=("$(printf '%-40s %5d s' "$1" $((SECONDS - stage_start)))")
  stage_start=$SECONDS
}
scripts/setup.sh all
stage_done "0. setup (packages, policies)"
budget=${LOCKSIM_TEST_BUDGET:-1800}
[[ $budget =~ ^[0-9]+$ ]] || {
  echo "test.sh: LOCKSIM_TEST_BUDGET='$budget' is not a number of seconds" >&2
  exit 2
}
budget_start=$SECONDS
# run_stage NAME COMMAND...: COMMAND under what is left of the budget. Returns COMMAND's exit
# status; when the budget runs out, stops the whole test command with the stage named.
run_stage() {
  local name=$1 left rc=0
  shift
  if [ "$budget" -eq 0 ]; then
    "$@" || rc=$?
    return $rc
  fi
  left=$((budget - (SECONDS - budget_start)))
  [ "$left" -gt 0 ] || left=1
  # timeout leads a process group of its own (the stage and all it starts, stopped together);
  # Ctrl-C reaches the test command only, which passes it on.
  timeout -k 30 "$left" "$@" &
  local pid=$! interrupted=0
  trap 'interrupted=1; kill -TERM $pid 2>/dev/null' INT TERM
  wait $pid || rc=$?
  if [ $interrupted = 1 ]; then
    wait $pid 2>/dev/null || true
    echo "test.sh: interrupted in stage \"$name\"" >&2
    exit 130
  fi
  trap - INT TERM
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    stage_done "$name (stopped)"
    printf '\ntest.sh: stopped: the test budget of %d s (LOCKSIM_TEST_BUDGET) ran out in stage "%s"\n' \
      "$budget" "$name" >&2
    printf 'time per stage\n' >&2
    printf '  %s\n' "${timings[@]}" >&2
    exit 124
  fi
  return $rc
}
# print_skips BUILD: each test of the last ctest run in BUILD that was skipped, with its reason
# (the test's own words: a script's "SKIP: ...", GoogleTest's skip message).
print_skips() {
  python3 - "$1/Testing/Temporary/LastTest.log" <<'EOF'
import re, sys
try:
    log = open(sys.argv[1], errors="replace").read()
except OSError:
    sys.exit(0)
skips = []
for block in re.split(r"\n(?=\d+/\d+ Testing: )", log):
    m = re.match(r"\d+/\d+ Testing: (\S+)", block)
    if not m:
        continue
    # GoogleTest's skips (ctest's "Skip regular expression found"), and the scripts' exit
    # status 77 after a line "SKIP: <reason>" (which the log records as passed).
    name, failed = m.group(1), "\nTest Failed" in block
    gtest = re.findall(r": Skipped\n(.*?)\n\[  SKIPPED \]", block, re.S)
    script = re.findall(r"^SKIP: (.*)$", block, re.M)
    if failed or not (gtest or script or "Skip regular expression found" in block):
        continue
    reasons = [" ".join(g.split()) for g in gtest] + script
    skips.append(f"  {name}: {'; '.join(r for r in reasons if r) or '(no reason printed)'}")
if skips:
    print(f"skipped, with the reason ({len(skips)}):")
    print("\n".join(skips))
EOF
}
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
run_stage "1. fuzzing (build and run)" cmake --build build/fuzz -j "$jobs" --target fuzz_all
run_stage "1. fuzzing (build and run)" ctest --test-dir build/fuzz -L fuzz --output-on-failure \
  --timeout 900 || status=$?
print_skips build/fuzz
stage_done "1. fuzzing (build and run)"

# 2. The real-thread platform under ThreadSanitizer (tests labelled 'tsan').
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${lines_only[@]}" "${unity[@]}" \
  -DLOCKSIM_SANITIZE=thread -DLOCKSIM_BENCH=OFF >/dev/null
run_stage "2. ThreadSanitizer (build and run)" cmake --build build/tsan -j "$jobs" --target tsan_tests
run_stage "2. ThreadSanitizer (build and run)" ctest --test-dir build/tsan -j "$jobs" -L tsan \
  --no-tests=error --output-on-failure --timeout 900 || status=$?
print_skips build/tsan
stage_done "2. ThreadSanitizer (build and run)"

# 3. Release, no sanitizer: the benchmark smoke runs, the plain-build torture catch and the
# documentation's outputs at the documented settings (too slow under the sanitizers).
cmake -S . -B build/test-release -G Ninja -DCMAKE_BUILD_TYPE=Release "${unity[@]}" \
  -DLOCKSIM_BENCH=ON >/dev/null
run_stage "3. Release benchmarks, docs (build and run)" cmake --build build/test-release -j "$jobs" \
  --target real_tests real_primitives_bench bench_services sim_bench bench_policydb locksim
run_stage "3. Release benchmarks, docs (build and run)" ctest --test-dir build/test-release \
  -R 'bench_smoke|TortureDeathTest|^docs\.shown_outputs$' --no-tests=error --output-on-failure \
  --timeout 900 || status=$?
print_skips build/test-release
stage_done "3. Release benchmarks, docs (build and run)"

# 4. The whole suite under ASan + UBSan (the benchmarks are built and run in stage 3); its
# summary is the last thing printed. Clang builds it: under the sanitizers it compiles this code
# in less than half GCC's time, and the other builds keep GCC's warnings checked.
# A build directory that an earlier run configured for GCC is removed: CMake cannot change the
# compiler of a configured directory and keep its settings.
if [ -f build/asan/CMakeCache.txt ] &&
  ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++$' build/asan/CMakeCache.txt; then
  rm -rf build/asan
fi
CC=clang CXX=clang++ cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${lines_only[@]}" "${unity[@]}" -DLOCKSIM_SANITIZE=address,undefined -DLOCKSIM_BENCH=OFF >/dev/null
run_stage "4. ASan + UBSan build" cmake --build build/asan -j "$jobs"
stage_done "4. ASan + UBSan build"
# The times so far; the ASan suite's own is ctest's "Total Test time", and its summary stays the
# last thing printed.
printf '\ntime per stage\n'
printf '  %s\n' "${timings[@]}"
run_stage "5. ASan + UBSan suite" ctest --test-dir build/asan -j "$jobs" -LE docs_full \
  --output-on-failure --timeout 900 || status=$?
print_skips build/asan

exit $status
