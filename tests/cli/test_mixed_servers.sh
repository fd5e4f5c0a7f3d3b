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
assert_top_replays "$WORK/optimize.json" 3 "${base[@]}"
/usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['strategy'].get('batch_split') == 'proportional' or j['strategy'].get('stage_split') == 'speed', j['strategy']" \
  "$WORK/optimize.json" && pass "the search uses a speed-aware split on mixed servers" || fail "no split chosen"

# The search with compression on VGG16 at 10 Gb/s: its answer uses SFB and replays, SFB layers
# chosen again by `simulate` on the same network.
vgg=(--set model.name=vgg16 --set model.batch_per_gpu=16 --set topology.servers=4 --set server.gpus=4
     --set topology.link_bandwidth=10Gbps --set simulate.network_model=analytical)
run_cmd optimize --target strategy "${vgg[@]}" --set optimize.search=exhaustive --set optimize.pp=1 \
  --set optimize.max_microbatches=2 --set optimize.top=2 --json
assert_status 0 "optimize VGG16 with compressions none,sfb"
cp "$WORK/out" "$WORK/vgg.json"
/usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['strategy'].get('compression') == 'sfb', j['strategy']" \
  "$WORK/vgg.json" && pass "the search picks SFB at 10 Gb/s" || fail "no SFB in the answer"
assert_top_replays "$WORK/vgg.json" 2 "${vgg[@]}"

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
