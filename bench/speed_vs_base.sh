#!/usr/bin/env bash
# Whole-simulation speed of this tree against a base commit, both built in Release, measured in
# one run with the two binaries interleaved (the machine's speed drifts; ratios within a round
# are the claim).
#
#   bench/speed_vs_base.sh [BASE] [ROUNDS]      (defaults: eee14a5, 3)
#
# Runs, each with -j1:
#   scaling-256   scenarios/scaling.toml at 256 CPUs, 50 ms simulated, rcu-cond-dup
#   default       locksim compare scenarios/default.toml
# Prints wall and CPU (user + system) seconds per binary and round, base/new ratios and their
# medians (on a shared machine CPU time moves less than wall time), and checks that each binary
# wrote the same results in every round (detail.engine, the wall-clock rates, aside). Whether
# base and new agree is printed too: they differ where the model changed since the base.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-eee14a5}
rounds=${2:-3}
work=$root/build/speed
src=$work/base-src
mkdir -p "$work"
export LOCKSIM_POLICY_DIR=${LOCKSIM_POLICY_DIR:-$root/.cache/policies}

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
build() {  # SOURCE BUILD
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSIM_TESTS=OFF "${launcher[@]}" >/dev/null
  cmake --build "$2" --target locksim >/dev/null
}
if [ ! -d "$src" ]; then
  git -C "$root" worktree add --detach "$src" "$base" >/dev/null
fi
git -C "$src" checkout -q --detach "$base"
echo "building $base and this tree in Release ..."
# Build directories at the same place relative to each source tree, so that ccache (with its
# base_dir above both) shares the objects of files the two trees have in common.
build "$src" "$src/build/release"
build "$root" "$root/build/release"
bin_base=$src/build/release/cli/locksim
bin_new=$root/build/release/cli/locksim

# scaling.toml with one point: 256 CPUs, 50 ms.
sed -e 's/^duration = .*/duration = "50ms"/' -e 's/^cpus = .*/cpus = 256/' -e '/^\[sweep\]/,$d' \
  "$root/scenarios/scaling.toml" >"$work/scaling-256.toml"

# default.toml with its seed count written as a list (older trees read only lists).
awk '/^seeds = [0-9]+$/ { n = $3; printf "seeds = ["; for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? ", " : ""), i; print "]"; next } { print }' \
  "$root/scenarios/default.toml" >"$work/default.toml"

run() {  # BINARY WHAT OUT: prints "wall cpu" in seconds (cpu = user + system)
  local bin=$1 what=$2 out=$3 TIMEFORMAT='%R %U %S'
  {
    time case $what in
      scaling-256) "$bin" run "$work/scaling-256.toml" --strategy rcu-cond-dup -j1 -q -o "$out" ;;
      default) "$bin" compare "$work/default.toml" -j1 -q -o "$out" ;;
    esac
  } 2>&1 | awk 'END { printf "%.3f %.3f\n", $1, $2 + $3 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", a / b }'; }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

rm -rf "$work"/out-*  # outputs of an earlier run (with more rounds) would join the checks
declare -A wall cpu
for r in $(seq "$rounds"); do
  for what in scaling-256 default; do
    for who in base new; do
      bin=$bin_new
      [ "$who" = base ] && bin=$bin_base
      read -r "wall[$what,$who,$r]" "cpu[$what,$who,$r]" < <(run "$bin" "$what" "$work/out-$who-$what-$r")
    done
    printf 'round %d %-12s wall base %6.2f s new %6.2f s (%.2fx) | cpu base %6.2f s new %6.2f s (%.2fx)\n' \
      "$r" "$what" "${wall[$what,base,$r]}" "${wall[$what,new,$r]}" \
      "$(ratio "${wall[$what,base,$r]}" "${wall[$what,new,$r]}")" \
      "${cpu[$what,base,$r]}" "${cpu[$what,new,$r]}" \
      "$(ratio "${cpu[$what,base,$r]}" "${cpu[$what,new,$r]}")"
  done
done

for what in scaling-256 default; do
  w=$(for r in $(seq "$rounds"); do ratio "${wall[$what,base,$r]}" "${wall[$what,new,$r]}"; done | median)
  c=$(for r in $(seq "$rounds"); do ratio "${cpu[$what,base,$r]}" "${cpu[$what,new,$r]}"; done | median)
  printf 'median %-12s %.2fx faster (wall), %.2fx (cpu)\n' "$what" "$w" "$c"
  python3 - "$what" "$work"/out-{base,new}-"$what"-*/results.json <<'EOF'
import json, sys
def load(p):
    d = json.load(open(p))
    for run in d["runs"]:
        run["detail"].pop("engine", None)
    return d
what, paths = sys.argv[1], sys.argv[2:]
ok = True
for who in ("base", "new"):
    mine = [load(p) for p in paths if f"/out-{who}-" in p]
    same = all(d == mine[0] for d in mine[1:])
    ok = ok and same
    print(f"results {what}, {who}: {'identical' if same else 'DIFFERENT'} in every round (detail.engine aside)")
agree = load(paths[0]) == load(paths[-1])
print(f"results {what}, base vs new: {'identical' if agree else 'different (the model changed since the base)'}")
sys.exit(0 if ok else 1)
EOF
done
python3 - "$work"/out-new-*-1/results.json <<'EOF'
import json, sys
for path in sys.argv[1:]:
    for run in json.load(open(path))["runs"]:
        e = run["detail"]["engine"]
        print(f"{path.split('/')[-2][:-2]:<22} {run['label']:<20} {e['events']:>9} events "
              f"{e['events_per_second'] / 1e6:6.2f} M events/s "
              f"{e['simulated_cpu_seconds_per_wall_second']:6.2f} simulated CPU-s per wall s")
EOF
