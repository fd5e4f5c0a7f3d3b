#!/usr/bin/env bash
# Mixed servers (issue 18) through the command line: the strategy search on a mixed cluster
# replays with `simulate` bit for bit (splits and SFB included); bad lists exit 2 with one line
# naming the key; own-network optimizers refuse mixed lists; a sweep rejects a bad list before
# any point runs and leaves an existing output untouched.
source "$(dirname "$0")/assert.sh"

base=(--set model.name=gpt3-1.3b --set model.global_batch=64 --set topology.kind=switch
      --set topology.servers=4 --set server.gpus=4 --set "server.device=a100*2,v100*2"
      --set topology.link_bandwidth=100Gbps --set simulate.network_model=analytical)

run_cmd optimize --target strategy "${base[@]}" --set optimize.search=exhaustive --set optimize.top=3 \
  --set optimize.max_microbatches=4 --json
assert_status 0 "optimize --target strategy on a4+v4 servers"
cp "$WORK/out" "$WORK/optimize.json"
for i in 0 1 2; do
  sets=$(/usr/bin/python3 - "$WORK/optimize.json" "$i" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["top"][int(sys.argv[2])]["strategy"]
keys = {"dp": s["dp"], "tp": s["tp"], "pp": s["pp"], "microbatches": s["microbatches"],
        "schedule": s["schedule"], "virtual_stages": s.get("virtual_stages", 1), "recompute": s["recompute"],
        "sequence_parallel": str(s["sequence_parallel"]).lower(), "tp_overlap": s["tp_overlap"],
        "dp_overlap": str(s["dp_overlap"]).lower(), "zero": s["zero_stage"],
        "batch_split": s.get("batch_split", "even"), "stage_split": s.get("stage_split", "even"),
        "compression": s.get("compression", "none")}
print(" ".join(f"--set strategy.{k}={v}" for k, v in keys.items()))
PY
)
  # shellcheck disable=SC2086
  run_cmd simulate "${base[@]}" $sets --json
  assert_status 0 "simulate top-$i"
  /usr/bin/python3 - "$WORK/optimize.json" "$WORK/out" "$i" <<'PY' && pass "top-$i replays bit for bit" || fail "top-$i replay"
import json, sys
want = json.load(open(sys.argv[1]))["top"][int(sys.argv[3])]["iteration_time_s"]
got = json.load(open(sys.argv[2]))["iteration_time_s"]
assert got == want, (got, want)
PY
done
/usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['strategy'].get('batch_split') == 'proportional' or j['strategy'].get('stage_split') == 'speed', j['strategy']" \
  "$WORK/optimize.json" && pass "the search uses a speed-aware split on mixed servers" || fail "no split chosen"

# VGG16 with SFB on a slow network: the JSON reports the choice and the bytes.
run_cmd simulate --set model.name=vgg16 --set model.batch_per_gpu=16 --set topology.servers=4 --set server.gpus=4 \
  --set topology.link_bandwidth=10Gbps --set strategy.compression=sfb --json
assert_status 0 "simulate with SFB"
/usr/bin/python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['compression']; assert any(l['chosen'] for l in c['layers']) and c['dp_bytes_per_rank_after'] < c['dp_bytes_per_rank_before'], c" \
  "$WORK/out" && pass "SFB reported with fewer DP bytes" || fail "SFB report"

for bad in "server.device=a100*3,v100*2" "server.device=a100,v100*3" "server.device=a100*2,nosuch*2" \
           "server.gpus=8*2,4*1" "server.gpus=8*0,4*4" "server.intra_bandwidth=300GB/s*2,fast*2"; do
  key=${bad%%=*}
  run_cmd simulate "${base[@]}" --set "$bad"
  assert_status 2 "bad list $bad"
  assert_stderr_has "$key" "the error names $key ($bad)"
  assert_one_error_line "$bad"
done
run_cmd optimize --target alternating "${base[@]}"
assert_status 2 "alternating refuses mixed devices"
assert_stderr_has "server.device" "the error names server.device"
run_cmd optimize --target topology "${base[@]}" --set "server.device=a100" --set "server.gpus=8*2,4*2"
assert_status 2 "the topology target refuses servers of different sizes"
assert_stderr_has "server.gpus" "the error names server.gpus"

# `collective` on servers of different sizes runs on every GPU of the member servers.
run_cmd collective --op allreduce --bytes 1GB --set topology.servers=2 --set "server.gpus=8*1,4*1" --json
assert_status 0 "collective on 8 + 4 GPUs"
/usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['ranks'] == 12 and j['time_s'] > 0, j" \
  "$WORK/out" && pass "12 ranks" || fail "collective ranks"

# A sweep with a bad list in one value: exit 2 before any point runs; the old output stays.
cat > "$WORK/space.ini" <<'INI'
[model]
name = bert-large
[topology]
servers = 4
[server]
gpus = 4
[space.s]
server.device = a100*2,v100*2 | a100*3,v100*2
INI
echo "previous" > "$WORK/old.h5"
run_cmd sweep --config "$WORK/space.ini" --out "$WORK/old.h5"
assert_status 2 "sweep with a bad server.device list"
assert_stderr_has "server.device" "the sweep error names server.device"
[[ "$(cat "$WORK/old.h5")" == "previous" ]] && pass "existing output untouched" || fail "output overwritten"

finish
