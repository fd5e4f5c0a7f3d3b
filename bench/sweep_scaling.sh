#!/usr/bin/env bash
# A sweep's 2-rank speed-up, and what the machine allows for it.
#
# Usage: bash bench/sweep_scaling.sh [ROUNDS [SPACE]] (default 5 rounds of
# inputs/sweeps/perf-1024.ini; build/toposweep must exist). bench/run.sh runs it on perf-1024.ini
# and on the cold-network space perf-1024-wide.ini.
# Each round runs, one after another: the sweep on 1 rank (mpirun -n 1), on 2 ranks, and two
# 1-rank sweeps at once, one pinned to each of cores 0 and 1 (two processes that share nothing).
# Those two together are the most two ranks could do on this machine: where vCPUs differ in speed
# or slow each other down (the development VMs: core 1 at times ~1.6x slower than core 0, and
# each ~10 % slower while the other is busy), their summed rate is well below 2x one rank. The
# figures are the sweep's closing line (points/s, journal and MPI start included), medians over the
# rounds.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
bin=build/toposweep
space=${2:-inputs/sweeps/perf-1024.ini}
# As root (../shared/PLATFORM-NOTES.md), as scripts/test.sh.
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rate() { grep -oE '\(([0-9]+) points/s' | tr -dc 0-9; }
for r in $(seq "$rounds"); do
  rm -rf "$tmp"/*
  one=$(mpirun -n 1 "$bin" sweep --config "$space" --out "$tmp/a.h5" 2>&1 | rate)
  two=$(mpirun -n 2 --oversubscribe "$bin" sweep --config "$space" --out "$tmp/b.h5" 2>&1 | rate)
  taskset -c 0 "$bin" sweep --config "$space" --out "$tmp/c0.h5" > "$tmp/c0.log" 2>&1 &
  pid=$!
  taskset -c 1 "$bin" sweep --config "$space" --out "$tmp/c1.h5" > "$tmp/c1.log" 2>&1
  wait "$pid"
  echo "$one $two $(rate < "$tmp/c0.log") $(rate < "$tmp/c1.log")"
done | /usr/bin/python3 -c '
import statistics, sys
rows = [list(map(int, l.split())) for l in sys.stdin if l.strip()]
for one, two, c0, c1 in rows:
    print(f"round: 1 rank {one} points/s, 2 ranks {two} ({two / one:.2f}x); two 1-rank sweeps at once: core 0 {c0}, core 1 {c1}, together {c0 + c1}")
med = lambda i: statistics.median(r[i] for r in rows)
one, two = med(0), med(1)
both = statistics.median(r[2] + r[3] for r in rows)
print(f"{sys.argv[1]}: medians of {len(rows)}: 1 rank {one:.0f} points/s; 2 ranks {two:.0f} ({two / one:.2f}x 1 rank); "
      f"the two cores busy with independent sweeps {both:.0f} ({both / one:.2f}x 1 rank): "
      f"2 ranks reach {two / both:.0%} of what the machine allows")
' "$(basename "$space")"
