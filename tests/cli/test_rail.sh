#!/usr/bin/env bash
# Rail fabrics (issue 34) through the command line: `topology --json` reports a hand-counted bill of
# materials; `collective`, `simulate` (analytical) and a sweep axis accept topology.kind = rail;
# a topology file that declares `gpus_per_node 1` is read as GPUs (ForestColl's 8-GPU A100 graph:
# forest AllGather at the closed form, not at the 4-GPUs-per-node reading); bad values exit 2.
source "$(dirname "$0")/assert.sh"
PY=/usr/bin/python3

# 4 servers x 2 GPUs, one 400 Gb/s NIC per GPU, radix 4: each rail has 2 leaves (2 down, 2 up),
# 2 spines join the 4 leaves. By hand: 8 NIC links + 8 leaf-spine links = 16 links (32 arcs);
# ports: 8 NIC, 8 + 16 switch; 32 transceivers (one per link end), 16 fibres. Built-in prices at
# 400 Gb/s (inputs/costs/libra.ini): NIC port 1200, switch port 600, transceiver 500, fibre 30:
# 8*1200 + 24*600 + 32*500 + 16*30 = 40480 US$.
rail=(--set topology.kind=rail --set topology.servers=4 --set server.gpus=2 --set topology.rail_radix=4
      --set topology.link_bandwidth=400Gbps)
run_cmd topology "${rail[@]}" --json
assert_status 0 "topology kind = rail"
$PY -c "
import json,sys; j=json.load(open('$WORK/out'))
assert (j['kind'], j['servers'], j['switches'], j['links'], j['rails'], j['planes'], j['spine']) == ('rail', 4, 6, 32, 2, 1, 'full'), j
assert j['rail_leaf_switches'] == 4 and j['rail_spine_switches'] == 2, j
assert j['cost_counts'] == {'nic_port': 8, 'switch_port': 24, 'transceiver': 32, 'fibre': 16}, j['cost_counts']
assert j['cost_breakdown'] == {'nic_port': 9600, 'switch_port': 14400, 'transceiver': 16000, 'fibre': 480}, j['cost_breakdown']
assert j['cost_usd'] == 40480, j['cost_usd']
" && pass "rail BOM equals the hand count" || fail "rail BOM: $(head -c 300 "$WORK/out")"

# Rail-only: one 4-port switch per rail, no spines: 8 links; 8 NIC + 8 switch ports, 16
# transceivers, 8 fibres = 8*1200 + 8*600 + 16*500 + 8*30 = 22640 US$.
run_cmd topology "${rail[@]}" --set topology.spine=none --json
assert_status 0 "topology rail-only"
$PY -c "
import json; j=json.load(open('$WORK/out'))
assert (j['switches'], j['links'], j['rail_leaf_switches'], j['rail_spine_switches'], j['spine']) == (2, 16, 2, 0, 'none'), j
assert j['cost_usd'] == 22640, j['cost_usd']
" && pass "rail-only BOM equals the hand count" || fail "rail-only BOM: $(head -c 300 "$WORK/out")"

# Three tiers (topology.rail_tiers = 3), same servers: pods of one server block (both rails'
# leaves), 2 aggregation switches a pod, 2 cores each with 2 links to each pod's aggregation
# switch. By hand: 10 switches; 8 NIC + 8 leaf-aggregation + 8 aggregation-core links = 24
# links, 40 arcs (each aggregation-core pair of links is one arc each way); ports: 8 NIC, 16 leaf
# + 16 aggregation + 8 core = 40 switch ports; 48 transceivers, 24 fibres:
# 8*1200 + 40*600 + 48*500 + 24*30 = 58320 US$.
run_cmd topology "${rail[@]}" --set topology.rail_tiers=3 --json
assert_status 0 "topology rail, 3 tiers"
$PY -c "
import json; j=json.load(open('$WORK/out'))
assert (j['switches'], j['links'], j['rail_tiers'], j['rail_leaf_switches'], j['rail_spine_switches'], j['rail_core_switches']) == (10, 40, 3, 4, 4, 2), j
assert j['cost_counts'] == {'nic_port': 8, 'switch_port': 40, 'transceiver': 48, 'fibre': 24}, j['cost_counts']
assert j['cost_usd'] == 58320, j['cost_usd']
" && pass "3-tier rail BOM equals the hand count" || fail "3-tier rail BOM: $(head -c 300 "$WORK/out")"

# collective on rail: forest AllGather on rail-only, 4 servers of 1 GPU and 4 NICs of 100 Gb/s:
# the tightest cut is one server receiving 3 of 4 units through its 4 NICs:
# optimal time = (3/4) * 1 GB / (4 * 12.5 GB/s) = 15 ms.
run_cmd collective --op allgather --algorithm forest --bytes 1GB --set topology.kind=rail --set topology.servers=4 \
  --set server.gpus=1 --set topology.rails=4 --set topology.spine=none --set topology.link_bandwidth=100Gbps --json
assert_status 0 "collective forest on rail-only"
$PY -c "
import json; j=json.load(open('$WORK/out'))
assert abs(j['optimal_time_s'] - 0.015) < 1e-12, j
assert j['ranks'] == 4 and j['time_s'] >= j['optimal_time_s'], j
" && pass "forest AllGather on rail-only at the cut bound" || fail "forest on rail: $(head -c 300 "$WORK/out")"

for spine in full none; do
  run_cmd simulate --set model.name=bert-large --set model.global_batch=64 --set topology.kind=rail --set topology.servers=8 \
    --set server.gpus=8 --set server.device=h100 --set topology.spine=$spine --set topology.link_bandwidth=400Gbps \
    --set strategy.dp=64 --set simulate.network_model=analytical --json
  assert_status 0 "simulate analytical on rail (spine = $spine)"
  $PY -c "import json; j=json.load(open('$WORK/out')); assert j['iteration_time_s'] > 0 and j['cost_usd'] > 0 and j['topology']['kind'] == 'rail', j['topology']" \
    && pass "simulate reports a rail iteration ($spine)" || fail "simulate rail ($spine)"
done

# A sweep with topology.spine as an axis: both points run; rail-only costs less.
cat > "$WORK/rail.ini" <<INI
[model]
name = bert-large
global_batch = 64
[server]
gpus = 8
device = h100
[topology]
kind = rail
servers = 8
link_bandwidth = 400Gbps
[strategy]
dp = 64
[simulate]
network_model = analytical
[space.rail]
topology.spine = full, none
INI
run_cmd sweep --config "$WORK/rail.ini" --out "$WORK/rail.h5" --log-level warn
assert_status 0 "sweep over topology.spine"
$PY -c "
import h5py; p = h5py.File('$WORK/rail.h5')['/points'][:]
assert len(p) == 2 and all(r['status'] == 0 for r in p), p
assert p[1]['cost_usd'] < p[0]['cost_usd'], (p[0]['cost_usd'], p[1]['cost_usd'])
" && pass "both spine values evaluated, rail-only cheaper" || fail "rail sweep"

# A GPU-level file: 8 A100s on an NVSwitch, 300 GB/s per GPU and direction, gpus_per_node 1.
# Forest AllGather of 1 GB: every GPU receives 7/8 GB at 300 GB/s, plus one link latency each
# way through the switch (topology.link_latency = 1 us): algbw = 1 GB / (7/8 GB / 300 GB/s + 2 us)
# = 342.62 GB/s (read as 4 GPUs per node it was 304.9).
topo="$SRC/inputs/topologies/dgx-a100-nvswitch.topo"
run_cmd collective --topology-file "$topo" --op allgather --algorithm forest --bytes 1GB --json
assert_status 0 "collective on the GPU-level A100 file"
$PY -c "
import json; j=json.load(open('$WORK/out'))
expect = 1e9 / (7 / 8 * 1e9 / 300e9 + 2e-6)
assert j['ranks'] == 8, j
assert abs(j['algbw_Bps'] - expect) < 1e-6 * expect, (j['algbw_Bps'], expect)
" && pass "declared 1 GPU per node: forest AllGather 342.6 GB/s" || fail "gpus_per_node file: $(head -c 300 "$WORK/out")"
run_cmd collective --topology-file "$topo" --op allgather --algorithm forest --bytes 1GB --set server.gpus=4
assert_status 2 "server.gpus against the file's gpus_per_node"
assert_stderr_has "dgx-a100-nvswitch.topo:5" "the error names the file's line"
assert_one_error_line "gpus_per_node conflict"

for bad in "topology.spine=some" "topology.planes=0" "topology.rail_radix=6x" "topology.rails=-1" "topology.rail_tiers=4"; do
  run_cmd topology "${rail[@]}" --set "$bad"
  assert_status 2 "bad $bad"
  assert_stderr_has "${bad%%=*}" "the error names ${bad%%=*}"
  assert_one_error_line "$bad"
done
run_cmd topology "${rail[@]}" --set topology.servers=64
assert_status 2 "64 servers x 2 rails do not fit radix 4"
assert_stderr_has "topology.rail_radix" "the error names topology.rail_radix"
# Three tiers of radix 4 hold 4 pods of one block (2 servers): 16 servers do not fit either.
run_cmd topology "${rail[@]}" --set topology.servers=16 --set topology.rail_tiers=3
assert_status 2 "16 servers x 2 rails do not fit 3 tiers of radix 4"
assert_stderr_has "3-tier rail fabric" "the error says which fabric"
finish
