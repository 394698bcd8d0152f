#!/usr/bin/env bash
# The cache model's own cost. The same runs on x86-server three ways: without its [memory] table
# (flat: every unit at its hot price), with the table and latencies of zero (zero: the model
# records, samples and prices every line, but no stall changes what the run does), and as shipped
# (model: its latencies change the run's timing, so its work differs too), and zero with
# core_lines = false (locks: the lock words' lines alone, which change the run itself on many
# CPUs; zero / locks is then the core's lines' own cost, a like-for-like ratio on scaling-256,
# where the flat run does other work). CPU time of each,
# alternating, REPS times; zero / flat is the model's own cost. Two runs: the main job's
# scenario (default.toml, all strategies, its 4 seeds) and scaling.toml at 256 CPUs for 50 ms
# (rcu-cond-dup), as bench/speed_vs_base.sh runs it.
#
# CPU seconds on a shared VM move by 10-30 % between runs of the same binary (the host's other
# load, its caches): `--instructions` measures instead what does not move, under cachegrind
# (valgrind, Debian package), once each: the instructions, and an estimate of the cycles that
# weighs cachegrind's simulated misses as its manual does (Ir + 10 x first-level misses + 100 x
# last-level misses), on the same runs cut to fit its 50-fold slowdown (default: one seed of
# 200 ms; scaling-256: 20 ms).
#
# usage: bench/cache_model_cost.sh [REPS]            (Release build in build/release)
#        bench/cache_model_cost.sh --instructions
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/release/cli/locksim
instructions=false
if [[ ${1:-} == --instructions ]]; then
  instructions=true
  shift
fi
reps=${1:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

awk '/^\[memory\]/{skip=1; next} /^\[/{skip=0} !skip' "$root/profiles/x86-server.toml" \
  >"$work/flat.toml"
sed -e 's/^llc_ns = .*/llc_ns = 0/' -e 's/^dram_ns = .*/dram_ns = 0/' \
  "$root/profiles/x86-server.toml" >"$work/zero.toml"
sed -e 's/^\[memory\]$/[memory]\ncore_lines = false/' "$work/zero.toml" >"$work/locks.toml"
cp "$root/profiles/x86-server.toml" "$work/model.toml"
for tag in flat locks zero model; do
  p=$work/$tag.toml
  sed -e "s|^profile = .*|profile = \"$p\"|" "$root/scenarios/default.toml" >"$work/default-$tag.toml"
  sed -e 's/^duration = .*/duration = "50ms"/' -e 's/^cpus = .*/cpus = 256/' -e '/^\[sweep\]/,$d' \
    -e "s|^profile = .*|profile = \"$p\"|" "$root/scenarios/scaling.toml" >"$work/scaling-256-$tag.toml"
done

# One run of a variant, under a measuring command (cpu or cg): variant MEASURE WHAT TAG.
variant() {
  case $2 in
    default) "$1" "$bin" compare "$work/default-$3.toml" -q -j1 -o "$work/out" ;;
    scaling-256) "$1" "$bin" run "$work/scaling-256-$3.toml" --strategy rcu-cond-dup -j1 -q \
                   -o "$work/out" ;;
  esac
}

if $instructions; then
  command -v valgrind >/dev/null || { echo "--instructions needs valgrind (apt install valgrind)" >&2; exit 1; }
  for tag in flat locks zero model; do
    sed -i -e 's/^duration = .*/duration = "200ms"/' -e 's/^seeds = .*/seeds = 1/' "$work/default-$tag.toml"
    sed -i -e 's/^duration = .*/duration = "20ms"/' "$work/scaling-256-$tag.toml"
  done
  # Ir and the cycle estimate of one run, from cachegrind's summary.
  cg() {
    valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null "$@" \
      >/dev/null 2>"$work/cg"
    awk '/ I *refs:/ {ir = $NF} / I1 *misses:/ {i1 = $NF} / LLi *misses:/ {lli = $NF}
         / D1 *misses:/ {d1 = $4} / LLd *misses:/ {lld = $4}
         END { gsub(",", "", ir); gsub(",", "", i1); gsub(",", "", lli); gsub(",", "", d1);
               gsub(",", "", lld); printf "%.0f %.0f\n", ir, ir + 10 * (i1 + d1) + 100 * (lli + lld) }' \
      "$work/cg"
  }
  for what in default scaling-256; do
    declare -A ir=() cyc=()
    for tag in flat locks zero model; do
      read -r i c < <(variant cg "$what" "$tag")
      ir[$tag]=$i cyc[$tag]=$c
    done
    echo "$what (cut): instructions flat ${ir[flat]} locks ${ir[locks]} zero ${ir[zero]} shipped ${ir[model]}; estimated cycles flat ${cyc[flat]} locks ${cyc[locks]} zero ${cyc[zero]} shipped ${cyc[model]}"
    awk -v fi="${ir[flat]}" -v li="${ir[locks]}" -v zi="${ir[zero]}" -v fc="${cyc[flat]}" \
        -v lc="${cyc[locks]}" -v zc="${cyc[zero]}" -v w="$what" \
      'BEGIN { printf "%s: the model'"'"'s own cost zero/flat %.3f (cycles %.3f); the core'"'"'s lines zero/locks %.3f (cycles %.3f)\n", w, zi / fi, zc / fc, zi / li, zc / lc }'
  done
  exit 0
fi

cpu() {  # user+system seconds of one run
  /usr/bin/time -o "$work/time" -f "%U %S" "$@" >/dev/null 2>&1
  awk '{ printf "%.2f", $1 + $2 }' "$work/time"
}
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for what in default scaling-256; do
  declare -A t=([flat]="" [locks]="" [zero]="" [model]="")
  for ((i = 0; i < reps; i++)); do
    for tag in flat locks zero model; do
      s=$(variant cpu "$what" "$tag")
      t[$tag]="${t[$tag]} $s"
    done
  done
  f=$(med ${t[flat]}) l=$(med ${t[locks]}) z=$(med ${t[zero]}) m=$(med ${t[model]})
  echo "$what: CPU s flat${t[flat]} (median $f); lock lines only${t[locks]} (median $l); zero latencies${t[zero]} (median $z); shipped${t[model]} (median $m)"
  awk -v f="$f" -v l="$l" -v z="$z" -v m="$m" -v w="$what" \
    'BEGIN { printf "%s: the model'"'"'s own cost zero/flat %.3f; the core'"'"'s lines zero/locks %.3f; shipped/flat %.3f\n", w, z / f, z / l, m / f }'
done
