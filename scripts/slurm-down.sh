#!/usr/bin/env bash
# Stops the one-node Slurm that scripts/slurm-up.sh started with the same $TOPOSWEEP_SLURM_DIR:
# slurmd, slurmctld and its own munged. Each daemon is found by its PID file under
# $TOPOSWEEP_SLURM_DIR/run and stopped only if that PID still runs the expected program; nothing is
# killed by name.
# Safe to run twice, or when nothing is up. Logs stay in $TOPOSWEEP_SLURM_DIR/log.
set -uo pipefail

say() { echo "slurm-down: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo > /dev/null 2>&1 && sudo -n true 2> /dev/null; then
    exec sudo -n --preserve-env=TOPOSWEEP_SLURM_DIR "$0" "$@"
  fi
  say "needs root or passwordless sudo"
  exit 77
fi

base=${TOPOSWEEP_SLURM_DIR:-/var/lib/toposweep-slurm}
[ -d "$base" ] || exit 0
base=$(cd "$base" && pwd)
run=$base/run
munge_dir=/run/toposweep-munge-$(printf %s "$base" | md5sum | cut -c1-12)

stop() {  # stop PIDFILE NAME
  local pidfile=$1 name=$2 pid
  [ -s "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if [ -d "/proc/$pid" ] && [ "$(cat "/proc/$pid/comm" 2> /dev/null)" = "$name" ]; then
    kill -TERM "$pid" 2> /dev/null
    for _ in $(seq 1 100); do
      [ -d "/proc/$pid" ] || break
      sleep 0.1
    done
    if [ -d "/proc/$pid" ]; then
      say "$name (PID $pid) ignored SIGTERM for 10 s; sending SIGKILL"
      kill -KILL "$pid" 2> /dev/null
    fi
    say "stopped $name (PID $pid)"
  fi
  rm -f "$pidfile"
}

stop "$run/slurmd.pid" slurmd
stop "$run/slurmctld.pid" slurmctld
stop "$run/munged.pid" munged
rm -rf "$munge_dir"
exit 0
