#!/usr/bin/env bash
# `export astra-sim` (docs/interop.md, "ASTRA-sim"): ASTRA-sim's network.yml and system.json for a
# design point, checked against values worked out by hand from docs/collectives.md's mapping, the
# Chakra workload beside them (astra_sim_check.py), and the networks that have no ASTRA-sim
# counterpart (exit 2, one line naming the key, nothing written). ASTRA-sim itself is not needed:
# scripts/validation/astra_side_by_side.sh runs it.
source "$(dirname "$0")/assert.sh"
PY=/usr/bin/python3

gpt=(--set model.name=gpt3-125m --set model.global_batch=16)

# 3-D multidim: ring:2 x fc:4 x switch:2 with per-NPU bandwidths 100, 300, 50 GiB/s and latencies
# 500 ns, 1 us, 2 us; ASTRA-sim's system costs on (4 chunks, 10 ns, 1600 GB/s).
#   Ring: the per-NPU bandwidth, 100 GB/s (2^30), 500 ns, implementation ring;
#   FullyConnected: 300 / (4 - 1) = 100 GB/s per link, 1000 ns, direct;
#   Switch: 50 GB/s, 2000 / 2 = 1000 ns per hop (two hops a crossing), halvingDoubling.
run_cmd export astra-sim --out "$WORK/md3" "${gpt[@]}" --set topology.kind=multidim --set topology.dims=ring:2,fc:4,switch:2 \
  --set topology.dim_bandwidth=100GiB/s,300GiB/s,50GiB/s --set topology.dim_latency=500ns,1us,2us \
  --set collective.chunks=4 --set collective.endpoint_delay=10ns --set collective.reduction_bandwidth=1600GB/s \
  --set strategy.tp=2 --set strategy.pp=2 --json
assert_status 0 "export astra-sim: 3-D multidim, tp 2, pp 2"
expected='{"network": {"topology": ["Ring", "FullyConnected", "Switch"], "npus_count": [2, 4, 2],
  "bandwidth": [100, 100, 50], "latency": [500, 1000, 1000]},
  "system": {"all-reduce-implementation": ["ring", "direct", "halvingDoubling"],
  "all-gather-implementation": ["ring", "direct", "halvingDoubling"],
  "reduce-scatter-implementation": ["ring", "direct", "halvingDoubling"],
  "all-to-all-implementation": ["ring", "direct", "halvingDoubling"],
  "endpoint-delay": 10, "preferred-dataset-splits": 4, "active-chunks-per-dimension": 1,
  "local-mem-bw": 1600, "collective-optimization": "localBWAware", "scheduling-policy": "LIFO"}}'
if $PY "$SRC/tests/cli/astra_sim_check.py" "$WORK/md3" "$expected" > "$WORK/check.out" 2>&1; then
  pass "3-D multidim: network.yml, system.json and workload as derived ($(cat "$WORK/check.out"))"
else
  fail "3-D multidim: $(tail -1 "$WORK/check.out")"
fi
$PY -c "
import json; j = json.load(open('$WORK/out'))
assert j['format'] == 'astra-sim' and j['ranks'] == 16, j
assert [d['implementation'] for d in j['dims']] == ['ring', 'direct', 'halvingDoubling'], j['dims']
assert '--network-configuration=$WORK/md3/network.yml' in j['command'], j['command']
assert '--comm-group-configuration=$WORK/md3/workload/toposweep.comm_groups.json' in j['command'], j['command']
assert j['workload'] == '$WORK/md3/workload/toposweep' and j['iteration_time_s'] > 0, j
" && pass "3-D multidim: --json names the files and the command" || fail "--json summary: $(head -c 400 "$WORK/out")"
assert_file() { if [ -f "$1" ]; then pass "$2"; else fail "$2: $1 missing"; fi; }
assert_file "$WORK/md3/README.md" "a README says how to run it"
assert_file "$WORK/md3/workload/toposweep.15.et" "one trace per rank under workload/"

# System costs off (toposweep's defaults): 1 chunk, endpoint-delay 1 ns (ASTRA-sim's least),
# reductions free (10^9 GB/s). Pure DP on one 8-NPU ring of 50 GiB/s, 500 ns.
run_cmd export astra-sim --out "$WORK/ring" "${gpt[@]}" --set topology.kind=multidim --set topology.dims=ring:8 \
  --set topology.dim_bandwidth=50GiB/s --set topology.dim_latency=500ns
assert_status 0 "export astra-sim: pure DP on a ring"
assert_stdout_has "1-D network" "text output: the network's dimensions"
assert_stdout_has "run: \"\$ASTRA_SIM\" --workload-configuration=$WORK/ring/workload/toposweep" "text output: the command"
expected='{"network": {"topology": ["Ring"], "npus_count": [8], "bandwidth": [50], "latency": [500]},
  "system": {"all-reduce-implementation": ["ring"], "endpoint-delay": 1, "preferred-dataset-splits": 1,
  "local-mem-bw": 1e9}}'
if $PY "$SRC/tests/cli/astra_sim_check.py" "$WORK/ring" "$expected" > "$WORK/check.out" 2>&1; then
  pass "ring: costs off map to 1 chunk, 1 ns, free reductions ($(cat "$WORK/check.out"))"
else
  fail "ring: $(tail -1 "$WORK/check.out")"
fi

# A switch of one-GPU servers: one Switch dimension; per server degree x link bandwidth =
# 2 x 100 Gb/s = 25e9 B/s = 23.283064365386963 GB/s (2^30), latency per link (a crossing is two),
# rings as toposweep runs them there.
run_cmd export astra-sim --out "$WORK/switch" "${gpt[@]}" --set topology.kind=switch --set topology.servers=8 \
  --set server.gpus=1 --set topology.degree=2 --set topology.link_bandwidth=100Gbps --set topology.link_latency=1us
assert_status 0 "export astra-sim: switch of one-GPU servers"
expected='{"network": {"topology": ["Switch"], "npus_count": [8], "bandwidth": [23.283064365386963],
  "latency": [1000]}, "system": {"all-reduce-implementation": ["ring"]}}'
if $PY "$SRC/tests/cli/astra_sim_check.py" "$WORK/switch" "$expected" > "$WORK/check.out" 2>&1; then
  pass "switch: one Switch dimension ($(cat "$WORK/check.out"))"
else
  fail "switch: $(tail -1 "$WORK/check.out")"
fi

# No ASTRA-sim counterpart: exit 2, one line naming the key, nothing written.
refused() {  # NAME KEY ARGS...
  local name=$1 key=$2
  shift 2
  run_cmd export astra-sim --out "$WORK/$name" "${gpt[@]}" "$@"
  assert_status 2 "$name"
  assert_one_error_line "$name"
  assert_stderr_has "($key)" "$name: names $key"
  if [ -e "$WORK/$name" ]; then fail "$name: wrote $WORK/$name"; else pass "$name: nothing written"; fi
}
refused fattree "key topology.kind" --set topology.kind=fattree --set topology.servers=2 --set server.gpus=4
refused switch_gpus "key server.gpus" --set topology.kind=switch --set topology.servers=2 --set server.gpus=4
refused multidim_ring "key collective.algorithm" --set topology.kind=multidim --set topology.dims=ring:4,ring:2 \
  --set collective.algorithm=ring
refused switch_forest "key collective.algorithm" --set topology.kind=switch --set topology.servers=8 \
  --set server.gpus=1 --set collective.algorithm=halving_doubling
# DeepEP's one copy per node: ASTRA-sim's All-to-All sends every copy.
refused deepep "key strategy.ep_dispatcher" --set topology.kind=multidim --set topology.dims=ring:4,ring:2 \
  --set model.name=mixtral-8x7b --set model.seq_len=256 --set model.global_batch=8 --set server.device=h200 \
  --set strategy.ep=8 --set strategy.ep_dispatcher=deepep
# A trace played back (model.chakra) exports too; ASTRA-sim's workload layer has no Broadcast
# (it would take the node's recorded time) or Reduce, so those are refused.
ring2=(--set topology.kind=multidim --set topology.dims=ring:2 --set topology.dim_bandwidth=100GiB/s)
$PY "$SRC/tests/cli/chakra_wire.py" "$WORK/hand" hand
run_cmd export astra-sim --out "$WORK/hand_astra" --set model.chakra="$WORK/hand" "${ring2[@]}" --json
assert_status 0 "export astra-sim of a played-back trace (an AllReduce)"
$PY "$SRC/tests/cli/chakra_wire.py" "$WORK/bcast" broadcast
run_cmd export astra-sim --out "$WORK/bcast_astra" --set model.chakra="$WORK/bcast" "${ring2[@]}"
assert_status 2 "export astra-sim of a Broadcast"
assert_one_error_line "export astra-sim of a Broadcast"
assert_stderr_has "Broadcast, which ASTRA-sim's workload layer does not simulate" "Broadcast: says why"
if [ -e "$WORK/bcast_astra" ]; then fail "Broadcast: wrote $WORK/bcast_astra"; else pass "Broadcast: nothing written"; fi

run_cmd export astra --out "$WORK/x" "${gpt[@]}"
assert_status 2 "unknown format 'astra'"
assert_stderr_has "(chakra, astra-sim)" "unknown format: lists chakra and astra-sim"

finish
