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
# nothing under /etc/slurm is touched. It runs its own munged on its own socket (under /run, named
# after that directory) and uses free ports, so it neither disturbs a munged or Slurm already on the
# machine nor another instance with a different TOPOSWEEP_SLURM_DIR (tests running side by side).
# Needs root or passwordless sudo; exits 77 (the CTest SKIP code) with a message when it has
# neither, and 1 when something fails.
#
# Environment: TOPOSWEEP_SLURM_DIR; TOPOSWEEP_SLURMCTLD_PORT and TOPOSWEEP_SLURMD_PORT (default: 6817
# and 6818 when free, else free ports); TOPOSWEEP_SLURM_WAIT (seconds to wait for the node to
# become idle, 60).
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
mkdir -p "$base"
base=$(cd "$base" && pwd)
wait_s=${TOPOSWEEP_SLURM_WAIT:-60}
conf=$base/slurm.conf
run=$base/run
# munged needs its socket where the munge user can reach it: under /run, one per instance.
munge_dir=/run/toposweep-munge-$(printf %s "$base" | md5sum | cut -c1-12)
munge_socket=$munge_dir/munge.socket

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

# A TCP port nobody listens on, handed out by the kernel (another instance starting at the same
# moment may still pick it: the daemons' ports are checked after they start, and picked again).
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# owns_port PIDFILE PORT: the daemon of PIDFILE is the one listening on PORT.
owns_port() {
  [ -s "$1" ] && grep -q "pid=$(cat "$1")," <<< "$(ss -Htlnp "sport = :$2" 2> /dev/null)"
}
stop_pidfile() {  # stop_pidfile PIDFILE NAME: stop a daemon this script started, by its PID file
  local pid
  alive "$1" "$2" || return 0
  pid=$(cat "$1")
  kill -TERM "$pid" 2> /dev/null
  for _ in $(seq 1 50); do
    [ -d "/proc/$pid" ] || break
    sleep 0.1
  done
  rm -f "$1"
}

mkdir -p "$base/state" "$base/spool" "$base/log" "$run"
for d in slurmctld slurmd munged; do
  if alive "$run/$d.pid" "$d"; then
    die "$d from an earlier slurm-up is still running (PID $(cat "$run/$d.pid")); run scripts/slurm-down.sh first"
  fi
done

# ---- munge: our own daemon on our own socket, with the machine's key ----
if [ ! -s /etc/munge/munge.key ]; then
  say "creating /etc/munge/munge.key"
  mungekey --create > /dev/null 2>&1 || die "mungekey --create failed"
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
fi
install -d -o munge -g munge -m 0755 "$munge_dir"
runuser -u munge -- /usr/sbin/munged --socket="$munge_socket" --pid-file="$munge_dir/munged.pid" \
  --log-file="$munge_dir/munged.log" --seed-file="$munge_dir/munged.seed" >&2 ||
  die "munged did not start; see $munge_dir/munged.log"
cp "$munge_dir/munged.pid" "$run/munged.pid"
for _ in $(seq 1 50); do
  munge -S "$munge_socket" -n 2> /dev/null | unmunge -S "$munge_socket" > /dev/null 2>&1 && break
  sleep 0.1
done
munge -S "$munge_socket" -n | unmunge -S "$munge_socket" > /dev/null 2>&1 ||
  die "munged started but 'munge -n | unmunge' fails on $munge_socket"
say "munged started (PID $(cat "$run/munged.pid"), socket $munge_socket)"

# ---- slurm.conf: one node, as root ----
host=$(hostname -s)
node_line=$(slurmd -C 2> /dev/null | head -n 1)
case "$node_line" in
  NodeName=*) ;;
  *) die "'slurmd -C' did not describe this node: $node_line" ;;
esac
node_name=${node_line%% *}
node_name=${node_name#NodeName=}

# ---- slurm.conf and the Slurm daemons; a failed start on a taken port is retried on others ----
start_slurm() {
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
AuthInfo=socket=$munge_socket
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

# Both daemons daemonize and write their PID files; each must end up listening on its own port
# (not merely find some slurmctld answering there).
slurmctld -c -f "$conf" || return 1
for _ in $(seq 1 100); do
  owns_port "$run/slurmctld.pid" "$ctld_port" && grep -q UP <<< "$(scontrol ping 2> /dev/null)" && break
  sleep 0.1
done
owns_port "$run/slurmctld.pid" "$ctld_port" || return 1
slurmd -f "$conf" || return 1
for _ in $(seq 1 100); do
  owns_port "$run/slurmd.pid" "$slurmd_port" && break
  sleep 0.1
done
owns_port "$run/slurmd.pid" "$slurmd_port"

}

for attempt in 1 2 3; do
  ctld_port=${TOPOSWEEP_SLURMCTLD_PORT:-$(free_port)}
  slurmd_port=${TOPOSWEEP_SLURMD_PORT:-$(free_port)}
  [ "$slurmd_port" != "$ctld_port" ] || continue
  start_slurm && break
  stop_pidfile "$run/slurmd.pid" slurmd
  stop_pidfile "$run/slurmctld.pid" slurmctld
  if [ "$attempt" = 3 ] || [ -n "${TOPOSWEEP_SLURMCTLD_PORT:-}${TOPOSWEEP_SLURMD_PORT:-}" ]; then
    stop_pidfile "$run/munged.pid" munged
    die "slurmctld/slurmd did not start on ports $ctld_port/$slurmd_port; see $base/log/"
  fi
  say "ports $ctld_port/$slurmd_port were taken; trying others"
done
owns_port "$run/slurmd.pid" "$slurmd_port" || die "could not find two free ports for slurmctld and slurmd"

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
