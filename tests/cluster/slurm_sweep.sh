#!/usr/bin/env bash
# A sweep on a real Slurm cluster: starts munged, slurmctld and slurmd (Debian's packages) on
# this host with a generated slurm.conf in a temporary directory (localhost only, no cgroups, no
# accounting), submits a sweep with `locksim sweep --slurm`, waits for its merge job and checks
# that the merged results equal the unsharded sweep's byte for byte.
#
#   slurm_sweep.sh LOCKSIM SCENARIO
#
# Exit status 77 (ctest's SKIP_RETURN_CODE) with the reason only when the packages are missing or
# the test does not run as root; a daemon that does not come up fails the test (exit status 1,
# with the daemons' logs). Needs no cgroup hierarchy (see cgroup.conf below). Everything started
# is stopped.
set -uo pipefail
locksim=$1
scenario=$2
skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*"
  for f in "$work"/munge/munged.log "$work"/slurmctld.log "$work"/slurmd.log \
    "$work"/slurmctld.out "$work"/slurmd.out "$work"/out/slurm/*.log; do
    [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
  done
  exit 1
}

for cmd in munged mungekey slurmctld slurmd sbatch squeue sinfo; do
  command -v "$cmd" >/dev/null || PATH=$PATH:/usr/sbin
  command -v "$cmd" >/dev/null || skip "$cmd is not installed (Debian: munge, slurm-wlm)"
done
[ "$(id -u)" -eq 0 ] || skip "the daemons run as root (SlurmUser=root); run the test as root"

work=$(mktemp -d /tmp/locksim-slurm.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

host=$(hostname -s)
cpus=$(nproc)
# Ports from this process's id, away from Slurm's defaults (6817, 6818) and any running cluster.
base=$((20000 + ($$ % 20000)))
mkdir -p "$work/state" "$work/spool" "$work/munge"
chmod 0700 "$work/munge"
mungekey -c -k "$work/munge/munge.key" >/dev/null 2>&1 ||
  fail "mungekey cannot create a key"
munged -f --socket="$work/munge/socket" --key-file="$work/munge/munge.key" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
  --seed-file="$work/munge/seed" -F >/dev/null 2>&1 &
pids+=($!)
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=locksimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
AuthInfo=socket=$work/munge/socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
# slurmd 22.05 initialises a cgroup plugin whatever the other plugins are, and its default
# (autodetect) stops it where /sys/fs/cgroup has no hierarchy mounted (a container, a chroot).
# The v1 plugin's start-up touches no hierarchy, and with proctrack/linuxproc and task/none
# above nothing else asks it for one: the test runs with or without cgroups mounted.
echo "CgroupPlugin=cgroup/v1" >"$work/cgroup.conf"

for _ in $(seq 50); do [ -S "$work/munge/socket" ] && break; sleep 0.1; done
[ -S "$work/munge/socket" ] || fail "munged did not start: $(tail -n 3 "$work/munge/munged.log" 2>/dev/null)"
slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$host" -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 60); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 0.5
done
if [ "$state" != idle ]; then
  fail "the node did not become idle within 30 s (state '${state:-no answer}')"
fi
echo "cluster up: $host, $cpus CPUs, slurmctld on port $base"

"$locksim" sweep "$scenario" -q -j1 --no-wall-clock -o "$work/all" || fail "the unsharded sweep failed"
submitted=$("$locksim" sweep "$scenario" -q -j1 --no-wall-clock -o "$work/out" --slurm --time 10:00) ||
  fail "sweep --slurm failed: $submitted"
echo "$submitted"
jobs=$(echo "$submitted" | sed -n 's/^submitted array job \([0-9]*\) .* merge job \([0-9]*\)$/\1,\2/p')
[ -n "$jobs" ] || fail "no job ids in: $submitted"
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$jobs" 2>/dev/null)" ] && break
  sleep 0.5
done
if [ -n "$(squeue -h -j "$jobs" 2>/dev/null)" ]; then fail "jobs $jobs still queued after 300 s"; fi
[ -f "$work/out/results.json" ] || fail "the merge job wrote no results.json"
cmp "$work/out/results.json" "$work/all/results.json" ||
  fail "merged results differ from the unsharded sweep"
echo "ok: $(ls "$work/out/shards" | wc -l) shards merged; identical to the unsharded sweep"
