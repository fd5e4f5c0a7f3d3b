#!/usr/bin/env bash
# Chakra execution traces (issue 30): `export chakra` writes one trace per rank; model.chakra plays
# a trace directory back. A design point exported and played back simulates to the same iteration
# time bit for bit (dense GPT, interleaved pipeline, ZeRO-3, MoE with expert parallelism, and the
# flow model), and each rank's trace is consistent on its own (chakra_check.py); a hand-written
# 2-rank trace simulates to the time worked out by hand; malformed traces exit 2 naming the file,
# the node and the field.
source "$(dirname "$0")/assert.sh"
PY=/usr/bin/python3

time_of() {  # JSON file -> iteration_time_s as Python's repr (17 significant digits)
  $PY -c "import json,sys; print(repr(json.load(open(sys.argv[1]))['iteration_time_s']))" "$1"
}

# round_trip NAME KEY=VALUE...: simulate the point, export it, simulate the export on the same
# network; all three times equal.
round_trip() {
  local name=$1
  shift
  local sets=() net=() a
  for a in "$@"; do
    sets+=(--set "$a")
    case "$a" in topology.* | server.* | simulate.*) net+=(--set "$a") ;; esac
  done
  run_cmd simulate "${sets[@]}" --json
  assert_status 0 "$name: simulate the planned point"
  cp "$WORK/out" "$WORK/$name.planned.json"
  run_cmd export chakra --out "$WORK/$name" "${sets[@]}" --json
  assert_status 0 "$name: export chakra"
  cp "$WORK/out" "$WORK/$name.export.json"
  run_cmd simulate --set model.chakra="$WORK/$name" "${net[@]}" --json
  assert_status 0 "$name: simulate the imported trace"
  local planned exported imported
  planned=$(time_of "$WORK/$name.planned.json")
  exported=$(time_of "$WORK/$name.export.json")
  imported=$(time_of "$WORK/out")
  if [ "$planned" == "$imported" ] && [ "$planned" == "$exported" ]; then
    pass "$name: round trip bit for bit ($planned s)"
  else
    fail "$name: planned $planned s, export says $exported s, imported $imported s"
  fi
  # What a per-rank reader (ASTRA-sim's feeder) meets: local dependencies, matched sends and
  # receives, collectives on exactly their group's ranks in one order (chakra_check.py).
  if $PY "$SRC/tests/cli/chakra_check.py" "$WORK/$name" > "$WORK/check.out" 2>&1; then
    pass "$name: per-rank traces consistent ($(cat "$WORK/check.out"))"
  else
    fail "$name: per-rank traces: $(tail -1 "$WORK/check.out")"
  fi
}

gpt=(model.name=gpt3-125m topology.kind=fattree topology.servers=2 server.gpus=4 model.global_batch=16)
round_trip dense "${gpt[@]}" strategy.tp=2 strategy.pp=2 strategy.microbatches=4
round_trip interleaved "${gpt[@]}" strategy.pp=4 strategy.schedule=interleaved strategy.virtual_stages=3 \
  strategy.microbatches=8
round_trip zero3 model.name=gpt3-350m topology.kind=fattree topology.servers=2 server.gpus=4 model.global_batch=32 \
  strategy.tp=2 strategy.zero=3
round_trip moe model.name=mixtral-8x7b model.seq_len=1024 model.global_batch=32 server.device=h100 server.gpus=8 \
  topology.kind=switch topology.servers=4 topology.link_bandwidth=400Gbps strategy.tp=2 strategy.pp=4 strategy.ep=2 \
  strategy.microbatches=4 strategy.zero=1
# The same with the EP All-to-Alls on their own stream under compute, fp8 dispatch.
round_trip moe_overlap model.name=mixtral-8x7b model.seq_len=1024 model.global_batch=32 server.device=h100 \
  server.gpus=8 topology.kind=switch topology.servers=4 topology.link_bandwidth=400Gbps strategy.tp=2 strategy.pp=4 \
  strategy.ep=2 strategy.microbatches=4 strategy.zero=1 strategy.ep_overlap=true model.moe_dispatch_datatype=fp8
round_trip flow "${gpt[@]}" strategy.tp=2 strategy.pp=2 strategy.microbatches=4 simulate.network_model=flow

# A sweep plays the trace on each of its networks (the sweep's row path: cached analytical layouts)
# to what `simulate` gives the planned point there.
cat > "$WORK/sweep.ini" <<EOF
[model]
chakra = $WORK/dense
[server]
gpus = 4
[topology]
kind = fattree
servers = 2
[space.bw]
topology.link_bandwidth = 100Gbps, 400Gbps
EOF
run_cmd sweep --config "$WORK/sweep.ini" --out "$WORK/sweep.h5" --log-level warn
assert_status 0 "sweep over link bandwidths with model.chakra"
run_cmd frontier "$WORK/sweep.h5" --json
cp "$WORK/out" "$WORK/sweep.json"
for bw in 100Gbps 400Gbps; do
  sets=()
  for a in "${gpt[@]}" strategy.tp=2 strategy.pp=2 strategy.microbatches=4 topology.link_bandwidth=$bw; do
    sets+=(--set "$a")
  done
  run_cmd simulate "${sets[@]}" --json
  planned=$(time_of "$WORK/out")
  swept=$($PY -c "
import json; j=json.load(open('$WORK/sweep.json'))
print(repr([p['iteration_time_s'] for p in j['frontier'] if p['axes']['topology.link_bandwidth'] == '$bw'][0]))")
  if [ "$planned" == "$swept" ]; then pass "sweep row at $bw: $swept s, as planned"; else
    fail "sweep row at $bw: $swept s, planned $planned s"; fi
done

# The export names one file per rank and ASTRA-sim's communicator-group file.
$PY -c "
import json,os,sys; j=json.load(open('$WORK/moe.export.json'))
assert j['format'] == 'chakra' and j['ranks'] == 32, j
assert [os.path.basename(f) for f in j['files']] == ['toposweep.%d.et' % r for r in range(32)], j['files']
g = json.load(open(j['comm_groups']))
assert all(isinstance(v, list) and all(0 <= r < 32 for r in v) for v in g.values()), g
" && pass "moe export: 32 rank files and a comm-groups file" || fail "moe export listing: $(head -c 300 "$WORK/moe.export.json")"

# A hand-written trace (tests/cli/chakra_wire.py writes the bytes): 2 ranks on one server, a
# 100 us compute node, then an AllReduce of 100 MB over both. Inside a server (docs/collectives.md,
# two-level collectives): latency + 2(g-1) step latencies + 2S(g-1)/g / (bandwidth x efficiency)
# = 10 us + 2 x 1 us + 1e8 B / 100 GB/s = 1.012 ms; after the compute: 1.112 ms.
hand=(--set topology.kind=switch --set topology.servers=1 --set server.gpus=2 --set server.intra_bandwidth=100GB/s
      --set server.intra_efficiency=1 --set server.intra_latency=10us --set server.intra_step_latency=1us)
$PY "$SRC/tests/cli/chakra_wire.py" "$WORK/hand" hand
run_cmd simulate --set model.chakra="$WORK/hand" "${hand[@]}" --json
assert_status 0 "hand-written trace simulates"
$PY -c "
import json; j=json.load(open('$WORK/out'))
assert abs(j['iteration_time_s'] - 1.112e-3) < 1e-15, j['iteration_time_s']
assert abs(j['compute_time_s'] - 100e-6) < 1e-15, j['compute_time_s']
assert j['breakdown']['comm_bytes_per_rank']['other'] == 1e8, j['breakdown']
" && pass "hand-written trace: 1.112 ms as worked by hand" || fail "hand trace: $(head -c 400 "$WORK/out")"

# Text output names the trace; keys that would plan a model are reported as not used.
run_cmd simulate --set model.chakra="$WORK/hand" "${hand[@]}" --set strategy.tp=2
assert_status 0 "hand-written trace, text output"
assert_stdout_has "toposweep simulate: chakra:$WORK/hand on switch" "text output names the trace"
assert_stdout_has "iteration     1.112 ms" "text output: 1.112 ms"
assert_stderr_has "not used: strategy.tp" "strategy.tp with model.chakra: reported as not used"

# Malformed traces: exit 2, one line naming the file, the node and the field.
bad_trace() {  # CASE EXPECTED-WHERE DESCRIPTION
  rm -rf "$WORK/$1"
  $PY "$SRC/tests/cli/chakra_wire.py" "$WORK/$1" "$1"
  run_cmd simulate --set model.chakra="$WORK/$1" "${hand[@]}"
  assert_status 2 "$3"
  assert_one_error_line "$3"
  assert_stderr_has "$2" "$3: names $2"
}
bad_trace bad_varint "hand.1.et, field length prefix" "unterminated varint length"
assert_stderr_has "bad varint" "unterminated varint length: says so"
bad_trace bad_comm_type "hand.0.et, node 2, field comm_type" "unknown comm_type"
assert_stderr_has "unknown comm_type 42" "unknown comm_type: names the value"
bad_trace missing_dep "hand.0.et, node 2, field data_deps" "dependency on a missing node"
assert_stderr_has "depends on node 7" "dependency on a missing node: names it"

# model.chakra needs a directory; the modes that plan have nothing to plan with a trace.
run_cmd simulate --set model.chakra="$WORK/nowhere" "${hand[@]}"
assert_status 2 "model.chakra that is not a directory"
assert_one_error_line "model.chakra that is not a directory"
run_cmd simulate --set model.chakra="$WORK/hand" --set simulate.jobs=bert-large:1 "${hand[@]}"
assert_status 2 "model.chakra with simulate.jobs"
assert_stderr_has "model.chakra" "model.chakra with simulate.jobs: names the key"
run_cmd optimize --target strategy --set model.chakra="$WORK/hand" "${hand[@]}"
assert_status 2 "model.chakra with an optimizer"
assert_stderr_has "an optimizer plans its own (key model.chakra" "model.chakra with an optimizer: says why"
run_cmd simulate --set model.chakra="$WORK/hand" --set strategy.compression=sfb "${hand[@]}"
assert_status 2 "model.chakra with strategy.compression = sfb"
# A trace written by Chakra's own PyTorch converter (tests/data/chakra/pytorch-converter/PROVENANCE.md):
# every node of the file, counted by chakra_check.py's own decoder, becomes one task; none of its
# host operators carries a duration, so the iteration takes no time.
conv="$SRC/tests/data/chakra/pytorch-converter"
nodes=$($PY -c "import sys; sys.path.insert(0, sys.argv[1]); import chakra_check as c; print(len(c.messages(sys.argv[2])) - 1)" \
  "$SRC/tests/cli" "$conv/chakra.0.et")
run_cmd simulate --set model.chakra="$conv" --set topology.kind=switch --set topology.servers=1 --set server.gpus=1 --json
assert_status 0 "converter-written trace: simulates"
got=$($PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['tasks'], d['iteration_time_s'])" "$WORK/out")
if [ "$got" == "$nodes 0.0" ] && [ "$nodes" -gt 200 ]; then
  pass "converter-written trace: $nodes nodes, $nodes tasks, no time"
else
  fail "converter-written trace: file has $nodes nodes; simulate says tasks, time = $got"
fi

# model.chakra_replicas: one rank's trace played on N data-parallel ranks. A pure data-parallel
# point's rank 0 alone, replicated over its 4 ranks, is the planned point bit for bit (each DP
# rank runs the same nodes; every collective spans the 4 ranks).
dp4=(--set model.name=gpt3-125m --set topology.kind=switch --set topology.servers=1 --set server.gpus=4
  --set model.global_batch=16 --set strategy.dp=4)
run_cmd simulate "${dp4[@]}" --json
assert_status 0 "dp4: simulate the planned point"
planned=$(time_of "$WORK/out")
run_cmd export chakra --out "$WORK/dp4" "${dp4[@]}"
assert_status 0 "dp4: export"
mkdir -p "$WORK/dp4-rank0" && cp "$WORK/dp4/toposweep.0.et" "$WORK/dp4-rank0/"
run_cmd simulate --set model.chakra="$WORK/dp4-rank0" --set model.chakra_replicas=4 --set topology.kind=switch \
  --set topology.servers=1 --set server.gpus=4 --json
assert_status 0 "dp4: rank 0's trace replicated over 4 ranks"
replayed=$(time_of "$WORK/out")
if [ "$planned" == "$replayed" ]; then pass "dp4: replicated rank 0 = planned point ($planned s)"; else
  fail "dp4: planned $planned s, replicated rank 0 $replayed s"; fi
run_cmd simulate --set model.chakra="$WORK/dp4" --set model.chakra_replicas=4 --set topology.kind=switch \
  --set topology.servers=1 --set server.gpus=4
assert_status 2 "replicas over a directory of 4 rank files"
assert_stderr_has "model.chakra_replicas" "replicas over 4 rank files: names the key"
mkdir -p "$WORK/dense-rank0" && cp "$WORK/dense/toposweep.0.et" "$WORK/dense-rank0/"
run_cmd simulate --set model.chakra="$WORK/dense-rank0" --set model.chakra_replicas=2 --set topology.kind=switch \
  --set topology.servers=1 --set server.gpus=2
assert_status 2 "replicating a trace with pipeline sends"
assert_stderr_has "cannot be replicated" "replicating sends: says why"
run_cmd simulate --set model.chakra="$conv" --set model.chakra_replicas=8 --set topology.kind=switch \
  --set topology.servers=1 --set server.gpus=8 --json
assert_status 0 "converter-written trace on 8 replicas"

# More GPUs in the trace than in the network.
run_cmd simulate --set model.chakra="$WORK/dense" --set topology.kind=switch --set topology.servers=1 --set server.gpus=4
assert_status 2 "trace of 8 ranks on 4 GPUs"
assert_stderr_has "needs 8 GPUs" "trace of 8 ranks on 4 GPUs: says how many"

# export's own errors.
gpt_sets=()
for a in "${gpt[@]}"; do gpt_sets+=(--set "$a"); done
run_cmd export --out "$WORK/x" "${hand[@]}"
assert_status 2 "export without a format"
run_cmd export onnx --out "$WORK/x" "${hand[@]}"
assert_status 2 "export to an unknown format"
assert_stderr_has "unknown export format 'onnx'" "export to an unknown format: names it"
run_cmd export chakra model.name=gpt3-125m --out "$WORK/x"
assert_status 2 "export with a key not given by --set"
assert_stderr_has "unexpected argument 'model.name=gpt3-125m'" "export with a stray argument: names it"
run_cmd export chakra "${gpt_sets[@]}"
assert_status 2 "export without --out"
assert_one_error_line "export without --out"
run_cmd export chakra --out "$WORK/hand" "${gpt_sets[@]}"
assert_status 2 "export into a directory of another job's traces"
assert_stderr_has "another job" "export into another job's directory: says so"
assert_stderr_has "--out" "export into another job's directory: names --out"
# Exporting a smaller design into the same directory removes the ranks it no longer has.
run_cmd export chakra --out "$WORK/dense" --set model.name=gpt3-125m --set topology.kind=fattree \
  --set topology.servers=1 --set server.gpus=4 --set model.global_batch=16 --set strategy.tp=2
assert_status 0 "re-export 4 ranks over 8"
if [ "$(ls "$WORK/dense" | grep -c '\.et$')" -eq 4 ]; then pass "stale rank files removed"; else fail "stale rank files: $(ls "$WORK/dense")"; fi

finish
