#!/usr/bin/env bash
# The exact strategy search through the command line: the k best strategies it reports replay
# with `simulate` to the same iteration time, bit for bit; its counts add up; the knob lists
# reject bad values naming the key.
source "$(dirname "$0")/assert.sh"

base=(--set model.name=gpt3-1.3b --set model.global_batch=32 --set topology.kind=switch
      --set topology.servers=4 --set server.gpus=4 --set topology.link_bandwidth=100Gbps
      --set simulate.network_model=analytical)

run_cmd optimize --target strategy "${base[@]}" --set optimize.search=exhaustive --set optimize.top=4 \
  --set optimize.max_microbatches=8 --json
assert_status 0 "optimize --target strategy, top 4"
cp "$WORK/out" "$WORK/optimize.json"

# The counts: every canonical candidate is infeasible, simulated or pruned.
/usr/bin/python3 - "$WORK/optimize.json" <<'PY' && pass "candidates = infeasible + simulations + pruned; 4 ranked" || fail "counts or ranking"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["search"] == "exhaustive", j["search"]
assert j["candidates"] == j["infeasible"] + j["simulations"] + j["pruned"], j
assert j["pruned"] > 0, "the bound pruned nothing"
top = j["top"]
assert len(top) == 4
assert top[0]["iteration_time_s"] == j["iteration_time_s"] and top[0]["gap"] == 0
assert all(a["iteration_time_s"] <= b["iteration_time_s"] for a, b in zip(top, top[1:]))
PY

# `models --gpus` counts the same space the search enumerates.
run_cmd models gpt3-1.3b --gpus 16 "${base[@]}" --set optimize.max_microbatches=8 --json
assert_status 0 "models --gpus 16"
/usr/bin/python3 - "$WORK/optimize.json" "$WORK/out" <<'PY' && pass "models --gpus counts the search's candidates" || fail "models --gpus count"
import json, sys
search, models = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["strategies"]
assert models["checked"] == search["candidates"] and models["infeasible"] == search["infeasible"], (models, search)
PY

# Each reported strategy, replayed as a plain point.
assert_top_replays "$WORK/optimize.json" 4 "${base[@]}"

# Context parallelism searched (optimize.cp): the answers with cp > 1 replay too.
cp_base=("${base[@]}" --set model.fused_attention=true)
run_cmd optimize --target strategy "${cp_base[@]}" --set optimize.search=exhaustive --set optimize.top=3 \
  --set optimize.cp=2 --set optimize.max_microbatches=4 --json
assert_status 0 "optimize --target strategy with optimize.cp = 2"
cp "$WORK/out" "$WORK/optimize_cp.json"
/usr/bin/python3 - "$WORK/optimize_cp.json" <<'PY' && pass "every answer has cp 2" || fail "cp answers"
import json, sys
j = json.load(open(sys.argv[1]))
assert all(t["strategy"]["cp"] == 2 for t in j["top"]), j["top"]
PY
assert_top_replays "$WORK/optimize_cp.json" 3 "${cp_base[@]}"

# Expert parallelism searched (optimize.ep) on a small Mixture-of-Experts model: the answers with
# ep = 2 replay too.
cat > "$WORK/tiny-moe.json" <<'JSON'
{"name": "tiny-moe", "transformer": {"layers": 4, "hidden": 1024, "heads": 16, "kv_heads": 4, "seq_len": 1024,
 "vocab": 32000, "mlp": "swiglu", "norm": "rmsnorm", "position": "rotary", "biases": false,
 "tied_embeddings": false, "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden": 2048}}}
JSON
ep_base=("${base[@]}" --set model.name="$WORK/tiny-moe.json")
run_cmd optimize --target strategy "${ep_base[@]}" --set optimize.search=exhaustive --set optimize.top=3 \
  --set optimize.ep=2 --set optimize.max_microbatches=4 --json
assert_status 0 "optimize --target strategy with optimize.ep = 2"
cp "$WORK/out" "$WORK/optimize_ep.json"
/usr/bin/python3 - "$WORK/optimize_ep.json" <<'PY' && pass "every answer has ep 2" || fail "ep answers"
import json, sys
j = json.load(open(sys.argv[1]))
assert all(t["strategy"]["ep"] == 2 for t in j["top"]), j["top"]
PY
assert_top_replays "$WORK/optimize_ep.json" 3 "${ep_base[@]}"

# Expert tensor parallelism searched: ep 8 on 16 GPUs exists at tp 2 (dp 4) only with whole experts
# folded over tp x dp (optimize.etp = 1), and at tp 4 (dp 4) only with the experts split over pairs
# of the TP ranks, folded over tp/etp x dp = 8 (optimize.etp = 2). Every answer runs that folding
# with sequence parallelism, and replays.
for etp_tp in "1 2" "2 4"; do
  read -r etp tp <<< "$etp_tp"
  run_cmd optimize --target strategy "${ep_base[@]}" --set optimize.search=exhaustive --set optimize.top=3 \
    --set optimize.ep=8 --set optimize.etp="$etp" --set optimize.tp="$tp" --set optimize.max_microbatches=4 --json
  assert_status 0 "optimize --target strategy with optimize.etp = $etp, optimize.tp = $tp"
  cp "$WORK/out" "$WORK/optimize_etp$etp.json"
  /usr/bin/python3 - "$WORK/optimize_etp$etp.json" "$etp" "$tp" <<'PY' && pass "every answer folds ep 8 with etp $etp at tp $tp" || fail "etp $etp answers"
import json, sys
j = json.load(open(sys.argv[1]))
etp, tp = int(sys.argv[2]), int(sys.argv[3])
assert j["top"] and all(t["strategy"]["etp"] == etp and t["strategy"]["ep"] == 8 and t["strategy"]["tp"] == tp
                        and t["strategy"]["sequence_parallel"] for t in j["top"]), j["top"]
PY
  assert_top_replays "$WORK/optimize_etp$etp.json" 3 "${ep_base[@]}"
done
run_cmd optimize --target strategy "${ep_base[@]}" --set optimize.etp=-1
assert_status 2 "optimize.etp = -1"
assert_one_error_line "optimize.etp = -1"

# Block recomputation (strategy.recompute_layers, not searched: every strategy tried keeps it):
# with full recomputation only, every answer recomputes the first 2 blocks of each chunk, and replays.
blocks_base=("${base[@]}" --set strategy.recompute_layers=2)
run_cmd optimize --target strategy "${blocks_base[@]}" --set optimize.recompute=full \
  --set optimize.search=exhaustive --set optimize.top=3 --set optimize.max_microbatches=4 --json
assert_status 0 "optimize --target strategy with strategy.recompute_layers = 2"
cp "$WORK/out" "$WORK/optimize_blocks.json"
/usr/bin/python3 - "$WORK/optimize_blocks.json" <<'PY' && pass "every answer recomputes 2 blocks a chunk" || fail "recompute_layers answers"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["top"] and all(t["strategy"]["recompute"] == "full" and t["strategy"]["recompute_layers"] == 2
                        for t in j["top"]), j["top"]
PY
assert_top_replays "$WORK/optimize_blocks.json" 3 "${blocks_base[@]}"

# The configured strategy is only the baseline: with the default pure data parallelism not
# dividing the batch (24 samples on 16 GPUs), the search still runs and says there is no baseline.
run_cmd optimize --target strategy "${base[@]}" --set model.global_batch=24 --set optimize.max_microbatches=4 --json
assert_status 0 "optimize with an invalid configured strategy"
/usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert 'not a valid design' in j['baseline'] and j['iteration_time_s'] > 0" \
  "$WORK/out" && pass "no baseline, a strategy found" || fail "invalid configured strategy"

run_cmd optimize --target strategy "${base[@]}" --set optimize.recompute=some
assert_status 2 "a recompute mode that does not exist"
assert_stderr_has "optimize.recompute" "the error names optimize.recompute"
assert_one_error_line "optimize.recompute = some"
run_cmd optimize --target strategy "${base[@]}" --set optimize.top=0
assert_status 2 "optimize.top = 0"
assert_stderr_has "optimize.top" "the error names optimize.top"

finish
