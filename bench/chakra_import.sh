#!/usr/bin/env bash
# The Chakra trace import at issue 30's scale: GPT-3 175B on 1,024 A100 (tp 8, pp 16, dp 8, 100
# microbatches, full recompute; 128 servers of 8 on a fat-tree of degree 8) exported into a temporary
# directory (1,024 rank files, 1,003,456 nodes, about 300 MB), then played back by `simulate` with
# model.chakra under /usr/bin/time. Prints the nodes, ranks, wall seconds and peak memory of the
# import (the simulation after it is a small part) and checks that the imported trace simulates
# to the exported point's iteration time bit for bit. Goal: <= 10 s and <= 2 GiB.
# Usage: bash bench/chakra_import.sh [BINARY]   (default build/toposweep)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/toposweep}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
net=(--set topology.kind=fattree --set topology.servers=128 --set server.gpus=8 --set topology.degree=8)
"$bin" export chakra --out "$tmp/et" --set model.name=gpt3-175b --set server.device=a100 "${net[@]}" \
  --set strategy.tp=8 --set strategy.pp=16 --set strategy.dp=8 --set strategy.microbatches=100 \
  --set model.global_batch=800 --set strategy.recompute=full --json > "$tmp/export.json"
/usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" simulate --set model.chakra="$tmp/et" "${net[@]}" --json \
  > "$tmp/import.json"
read -r wall rss < "$tmp/time"
/usr/bin/python3 - "$tmp/export.json" "$tmp/import.json" "$wall" "$rss" <<'PY'
import json, sys
e, i = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
same = "same" if e["iteration_time_s"] == i["iteration_time_s"] else "DIFFERS"
print(f"chakra import: {e['nodes']:,} nodes, {e['ranks']:,} ranks: {float(sys.argv[3]):.2f} s wall, "
      f"{int(sys.argv[4]) / 1024:.0f} MiB peak; iteration {i['iteration_time_s']!r} s ({same} as exported "
      f"{e['iteration_time_s']!r} s)")
sys.exit(0 if same == "same" else 1)
PY
