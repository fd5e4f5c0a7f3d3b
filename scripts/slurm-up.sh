#!/usr/bin/env bash
# Brings up a one-node Slurm cluster on this machine (munged if none answers, slurmctld, slurmd),
# for the Slurm end-to-end test and for trying the jobs/ scripts without a cluster.
#
#   eval "$(scripts/slurm-up.sh)"     # prints `export SLURM_CONF=...` on stdout, progress on stderr
#   sbatch jobs/sweep.sbatch ...
#   scripts/slurm-down.sh             # stops exactly the daemons this script started
#
# Installs slurm-wlm and munge from Debian when they are missing. Everything it writes (slurm.conf,
# state, spool, logs, PID files) lives under $TOPOSWEEP_SLURM_DIR (default /var/lib/toposweep-slurm);
# nothing under /etc/slurm is touched. Needs root or passwordless sudo; exits 77 (the CTest SKIP
# code) with a message when it has neither, and 1 when something fails.
#
# Environment: TOPOSWEEP_SLURM_DIR, TOPOSWEEP_SLURMCTLD_PORT (6817), TOPOSWEEP_SLURMD_PORT (6818),
# TOPOSWEEP_SLURM_WAIT (seconds to wait for the node to become idle, 60).
set -euo pipefail

say() { echo "slurm-up: $*" >&2; }
die() { say "error: $*"; exit 1; }

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo > /dev/null 2>&1 && sudo -n true 2> /dev/null; then
    exec sudo -n --preserve-env=TOPOSWEEP_SLURM_DIR,TOPOSWEEP_SLURMCTLD_PORT,TOPOSWEEP_SLURMD_PORT,TOPOSWEEP_SLURM_WAIT \
      "$0" "$@"
  fi
  say "SKIP: needs root or passwordless sudo to install Slurm and run its daemons (uid $(id -u))"
  exit 77
fi

base=${TOPOSWEEP_SLURM_DIR:-/var/lib/toposweep-slurm}
ctld_port=${TOPOSWEEP_SLURMCTLD_PORT:-6817}
slurmd_port=${TOPOSWEEP_SLURMD_PORT:-6818}
wait_s=${TOPOSWEEP_SLURM_WAIT:-60}
conf=$base/slurm.conf
run=$base/run

# ---- packages ----
need=()
command -v slurmctld > /dev/null 2>&1 || need+=(slurm-wlm)
command -v munged > /dev/null 2>&1 || need+=(munge)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt_get=(apt-get -o DPkg::Lock::Timeout=600 -q)
  if ! "${apt_get[@]}" install -y --no-install-recommends "${need[@]}" >&2; then
    "${apt_get[@]}" update >&2 || die "apt-get update failed"
    "${apt_get[@]}" install -y --no-install-recommends "${need[@]}" >&2 || die "could not install ${need[*]}"
  fi
fi

# A PID file names a live process of the expected program (guards against PID reuse).
alive() {  # alive PIDFILE NAME
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1")
  [ -d "/proc/$pid" ] && [ "$(cat "/proc/$pid/comm" 2> /dev/null)" = "$2" ]
}

mkdir -p "$base/state" "$base/spool" "$base/log" "$run"
for d in slurmctld slurmd; do
  if alive "$run/$d.pid" "$d"; then
    die "$d from an earlier slurm-up is still running (PID $(cat "$run/$d.pid")); run scripts/slurm-down.sh first"
  fi
done

# ---- munge: reuse a daemon that already answers, otherwise start our own ----
rm -f "$run/munged.started"
if munge -n 2> /dev/null | unmunge > /dev/null 2>&1; then
  say "munged already running; using it"
else
  if [ ! -s /etc/munge/munge.key ]; then
    say "creating /etc/munge/munge.key"
    mungekey --create > /dev/null 2>&1 || die "mungekey --create failed"
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid >&2 || die "munged did not start"
  for _ in $(seq 1 50); do
    munge -n 2> /dev/null | unmunge > /dev/null 2>&1 && break
    sleep 0.1
  done
  munge -n | unmunge > /dev/null 2>&1 || die "munged started but 'munge -n | unmunge' fails"
  cp /run/munge/munged.pid "$run/munged.pid"
  touch "$run/munged.started"
  say "munged started (PID $(cat "$run/munged.pid"))"
fi

# ---- slurm.conf: one node, as root ----
host=$(hostname -s)
node_line=$(slurmd -C 2> /dev/null | head -n 1)
case "$node_line" in
  NodeName=*) ;;
  *) die "'slurmd -C' did not describe this node: $node_line" ;;
esac
node_name=${node_line%% *}
node_name=${node_name#NodeName=}

cat > "$conf" << EOF
# Written by toposweep scripts/slurm-up.sh: a one-node cluster on $host for tests.
ClusterName=toposweep
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
ReturnToService=2
# Jobs stay visible to 'scontrol show job' for 10 minutes after they end (there is no accounting).
MinJobAge=600
# A job that ignores its time-limit signal is killed 5 s after SIGTERM instead of 30 s.
KillWait=5
StateSaveLocation=$base/state
SlurmdSpoolDir=$base/spool
SlurmctldPidFile=$run/slurmctld.pid
SlurmdPidFile=$run/slurmd.pid
SlurmctldLogFile=$base/log/slurmctld.log
SlurmdLogFile=$base/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$node_name Default=YES MaxTime=INFINITE State=UP
EOF
chmod 0644 "$conf"
export SLURM_CONF=$conf

# ---- daemons: both daemonize and write their PID files ----
slurmctld -c -f "$conf" || die "slurmctld did not start; see $base/log/slurmctld.log"
for _ in $(seq 1 100); do
  scontrol ping 2> /dev/null | grep -q UP && break
  sleep 0.1
done
scontrol ping 2> /dev/null | grep -q UP || die "slurmctld does not answer; see $base/log/slurmctld.log"
slurmd -f "$conf" || die "slurmd did not start; see $base/log/slurmd.log"

state=""
for _ in $(seq 1 $((wait_s * 5))); do
  state=$(sinfo -h -o %t 2> /dev/null | head -n 1)
  [ "$state" = "idle" ] && break
  case "$state" in
    down* | drain* | drng* | fail*) scontrol update NodeName="$node_name" State=RESUME 2> /dev/null || true ;;
  esac
  sleep 0.2
done
[ "$state" = "idle" ] || die "node $node_name is '$state', not idle, after ${wait_s}s; see $base/log/"
say "slurmctld (PID $(cat "$run/slurmctld.pid")) and slurmd (PID $(cat "$run/slurmd.pid")) up; node $node_name idle"
echo "export SLURM_CONF=$conf"
