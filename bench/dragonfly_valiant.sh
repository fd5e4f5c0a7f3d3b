#!/usr/bin/env bash
# Valiant routing at issue 34's scale: a direct All-to-All of 64 MB per rank over a dragonfly of
# 1,056 servers (a = 8 routers per group, p = 4 servers per router, h = 4 global links per router:
# g = 33 groups), one GPU each, timed by `collective` under /usr/bin/time with topology.routing =
# minimal and valiant. Prints each routing's wall seconds, peak memory and collective time. With one
# walk per transfer and intermediate group Valiant took 21-28 s (58 s beside a build) against
# 1.3-1.4 s minimal; split per phase (RouteCache::valiant_split) it takes 0.9-1.2 s against
# minimal's 1.2-1.5 s (two shared cores). Goal: valiant / minimal wall <= 1.5.
# Usage: bash bench/dragonfly_valiant.sh [BINARY]   (default build/toposweep)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/toposweep}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for routing in minimal valiant; do
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" collective --op alltoall --bytes 64MB \
    --set topology.kind=dragonfly --set topology.routers_per_group=8 --set topology.terminals_per_router=4 \
    --set topology.global_links_per_router=4 --set server.gpus=1 --set topology.routing="$routing" --json \
    > "$tmp/$routing.json"
  read -r wall rss < "$tmp/time"
  echo "$routing $wall $rss" >> "$tmp/rows"
done
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
walls = {}
for line in open(f"{tmp}/rows"):
    routing, wall, rss = line.split()
    walls[routing] = float(wall)
    t = json.load(open(f"{tmp}/{routing}.json"))["time_s"]
    print(f"dragonfly a=8 p=4 h=4 (1,056 servers), alltoall 64 MB, {routing}: {float(wall):.2f} s wall, "
          f"{int(rss) / 1024:.0f} MiB peak; collective {t * 1e3:.4f} ms")
print(f"valiant / minimal wall: {walls['valiant'] / walls['minimal']:.2f}")
PY
