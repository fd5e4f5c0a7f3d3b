#!/usr/bin/env bash
# A sweep whose every point runs the exact strategy search (inputs/sweeps/perf-optimize.ini: 8
# points, GPT-3 1.3B on 16 A100, tp and pp from {1, 2}), timed under /usr/bin/time: wall seconds,
# seconds per point and peak memory. Until 89d1d82 each point spelled the accepted values of
# optimize.cp and optimize.ep (0..2^24) while reading its search lists: 27.89 s for these 8 points
# (3.49 s a point, peak 387 MiB); since, 1.17 s (0.15 s a point, 37 MiB; two shared cores).
# Usage: bash bench/optimize_sweep.sh [BINARY]   (default build/toposweep)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/toposweep}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" sweep --config inputs/sweeps/perf-optimize.ini \
  --out "$tmp/points.h5" --log-level quiet > /dev/null
read -r wall rss < "$tmp/time"
/usr/bin/python3 - "$wall" "$rss" <<'PY'
import sys
wall, rss = float(sys.argv[1]), float(sys.argv[2])
print(f"optimizing sweep: 8 points in {wall:.2f} s wall ({wall / 8:.3f} s a point), peak {rss / 1024:.1f} MiB")
PY
