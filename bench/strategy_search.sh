#!/usr/bin/env bash
# The exact strategy search on issue 19's two cases and issue 32's, one process each (one core) unless RANKS > 1:
# GPT-3 175B on 64 A100 (batch 3072, Calculon's example) and on 1,024 A100 (batch 1536), Llama 3 405B on
# 16,384 H100 (batch 2048 x 8k tokens, tp/cp/pp/dp and every knob; inputs/optimize/llama3-405b-16k.ini). Prints wall time,
# peak memory, the best strategy and time, and the search's counts.
# Usage: bash bench/strategy_search.sh [BINARY]   (default build/toposweep)
# RANKS=N splits each search over N MPI ranks (mpirun -n N; the same answer and counts); the peak
# memory is then the largest process's. MPIRUN names the launcher (default mpirun).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/toposweep}
launch=()
if [ "${RANKS:-1}" -gt 1 ]; then launch=("${MPIRUN:-mpirun}" -n "$RANKS"); fi
for case in gpt3-175b-64gpu gpt3-175b-1024gpu llama3-405b-16k; do
  out=$(mktemp)
  /usr/bin/time -f "%e %M" -o "$out.time" "${launch[@]}" "$bin" optimize --config "inputs/optimize/$case.ini" --target strategy \
    --set optimize.search=exhaustive --log-level warn --json > "$out"
  read -r wall rss < "$out.time"
  /usr/bin/python3 - "$out" "$case" "$wall" "$rss" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["strategy"]
knobs = f"dp {s['dp']} tp {s['tp']} pp {s['pp']} cp {s.get('cp', 1)} microbatches {s['microbatches']} {s['schedule']}" + \
    (f" x{s['virtual_stages']}" if s["schedule"] == "interleaved" else "") + \
    f" recompute {s['recompute']} sp {s['sequence_parallel']} tp_overlap {s['tp_overlap']} zero {s['zero_stage']}"
print(f"{sys.argv[2]}: {float(sys.argv[3]):.1f} s wall, {int(sys.argv[4]) / 1024:.0f} MiB peak; "
      f"best {j['iteration_time_s']:.2f} s ({knobs}); baseline {j['baseline_iteration_time_s']:.2f} s; "
      f"{j['candidates']} candidates, {j['infeasible']} do not fit, {j['simulations']} simulated, "
      f"{j['pruned']} pruned ({j['pruned'] / max(1, j['candidates'] - j['infeasible']):.0%} of those that fit)")
PY
  rm -f "$out" "$out.time"
done
