#!/usr/bin/env bash
# Installs what locksim needs on Debian 12 and builds the Debian reference policies.
# Safe to run again: packages are installed only when missing, policies only when absent.
#
#   scripts/setup.sh main       what the main job needs (scripts/main.sh): packages + policies
#   scripts/setup.sh [all]      that, and what the tests need (scripts/test.sh)
#   scripts/setup.sh packages   every package only
#   scripts/setup.sh policies   policies only
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}

# The main job: build locksim, run it, draw the report; bzip2 and ca-certificates build the
# policies from Debian's packages.
main_packages=(g++ make cmake pkgconf ninja-build libboost-dev libboost-context-dev liburcu-dev
  libtbb-dev libtomlplusplus-dev nlohmann-json3-dev libcli11-dev libfmt-dev python3-matplotlib
  bzip2 ca-certificates)
# The tests and benchmarks only: GoogleTest and Benchmark, libsepol (the oracle) and checkpolicy
# (the fixtures), clang (libFuzzer and the sanitizer suite), SimGrid and cyclictest (peers
# measured against), Chromium (renders the report's page), clang-format.
test_packages=(libgtest-dev libbenchmark-dev libsepol-dev checkpolicy clang libclang-rt-14-dev
  clang-format libsimgrid-dev rt-tests chromium)
# The one-node Slurm cluster of tests/cluster.
test_packages+=(munge slurm-wlm)

install_packages() {
  local packages=("$@")
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# Modules the Debian packages mark as not part of the default build.
not_default="amtu bugzilla cobbler condor cyphesis git ksmtuned likewise livecd nessus numad oddjob openca soundserver thunderbird updfstab usernetctl"

build_policies() {
  local cache="$here/.cache/policies"
  if [ -s "$cache/default.policy.33" ] && [ -s "$cache/mls.policy.33" ] && [ -s "$cache/default.policy.24" ]; then
    return 0
  fi
  echo "setup: building the Debian reference policies into $cache"
  local work
  work=$(mktemp -d)
  chmod 0777 "$work"
  trap 'rm -rf "$work"' RETURN
  (cd "$work" && apt-get download selinux-policy-default selinux-policy-mls secilc policycoreutils >/dev/null 2>&1) || {
    apt-get update -qq
    (cd "$work" && apt-get download selinux-policy-default selinux-policy-mls secilc policycoreutils >/dev/null)
  }
  mkdir -p "$work/root"
  for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/root"; done
  local root="$work/root"
  mkdir -p "$cache"
  for flavour in default mls; do
    local cil="$work/cil_$flavour"
    mkdir -p "$cil"
    while read -r m; do
      [ -n "$m" ] || continue
      case " $not_default " in *" $m "*) continue ;; esac
      local pp="$root/usr/share/selinux/$flavour/$m.pp.bz2"
      [ -f "$pp" ] || continue
      bunzip2 -c "$pp" | "$root/usr/libexec/selinux/hll/pp" >"$cil/$m.cil"
    done <"$root/usr/share/selinux/$flavour/.modules"
    for v in 33 24; do
      LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu" \
        "$root/usr/bin/secilc" -c "$v" -o "$cache/$flavour.policy.$v.tmp" -f /dev/null "$cil"/*.cil
      mv "$cache/$flavour.policy.$v.tmp" "$cache/$flavour.policy.$v"
    done
  done
}

case "$what" in
  main) install_packages "${main_packages[@]}"; build_policies ;;
  all) install_packages "${main_packages[@]}" "${test_packages[@]}"; build_policies ;;
  packages) install_packages "${main_packages[@]}" "${test_packages[@]}" ;;
  policies) build_policies ;;
  *) echo "usage: $0 [main|all|packages|policies]" >&2; exit 2 ;;
esac
