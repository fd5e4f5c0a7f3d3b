#!/usr/bin/env bash
# strategy.recompute_modules, model.optimizer_moments and model.moe_activation_datatype through the
# command line: good values run (the default list gives exactly today's selective recomputation, a
# longer list less activation memory), bad ones are one error line naming the key and the line
# that set it (exit 2).
source "$(dirname "$0")/assert.sh"
PY=/usr/bin/python3

base=(--set topology.kind=switch --set topology.servers=2 --set server.gpus=8 --set server.device=h100
      --set model.name=gpt3-1.3b --set model.datatype=bf16 --set model.fused_attention=false
      --set strategy.tp=2 --set strategy.pp=2 --set strategy.microbatches=4 --set model.global_batch=16
      --set strategy.recompute=selective)

run_cmd simulate "${base[@]}" --json
assert_status 0 "selective recomputation"
cp "$WORK/out" "$WORK/default.json"
run_cmd simulate "${base[@]}" --set strategy.recompute_modules=core_attn --json
assert_status 0 "recompute_modules = core_attn"
cp "$WORK/out" "$WORK/core_attn.json"
run_cmd simulate "${base[@]}" --set strategy.recompute_modules=core_attn,layernorm,mlp --json
assert_status 0 "recompute_modules = core_attn,layernorm,mlp"
cp "$WORK/out" "$WORK/more.json"
$PY - "$SRC/tests/cli" "$WORK/default.json" "$WORK/core_attn.json" "$WORK/more.json" << 'PY' && pass "core_attn is the default; more modules keep less, take longer" || fail "recompute_modules results"
import sys
sys.path.insert(0, sys.argv[1])
from json_clean import assert_same, load
a, b, c = (load(p) for p in sys.argv[2:])
assert_same(a, b)
assert c["strategy"]["recompute_modules"] == "core_attn,layernorm,mlp", c["strategy"]
assert "recompute_modules" not in a["strategy"], a["strategy"]
assert c["memory_per_gpu_bytes"] < a["memory_per_gpu_bytes"], (c["memory_per_gpu_bytes"], a["memory_per_gpu_bytes"])
assert c["iteration_time_s"] > a["iteration_time_s"]
PY

run_cmd simulate "${base[@]}" --set model.optimizer_moments=bf16 --json
assert_status 0 "optimizer_moments = bf16"
$PY -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
assert a['memory_per_gpu_bytes'] < b['memory_per_gpu_bytes'], (a['memory_per_gpu_bytes'], b['memory_per_gpu_bytes'])
assert a['iteration_time_s'] <= b['iteration_time_s']" \
  "$WORK/out" "$WORK/default.json" && pass "bf16 moments: less memory" || fail "bf16 moments"

# Errors: one line, exit 2, naming the key and the line that set it.
bad_config() {  # DESCRIPTION SECTION KEY VALUE
  printf '[%s]\n%s = %s\n' "$2" "$3" "$4" > "$WORK/bad.ini"
  run_cmd simulate --config "$WORK/bad.ini" "${base[@]}"
  assert_status 2 "$1"
  assert_one_error_line "$1"
  assert_stderr_has "$2.$3" "$1 names the key"
  assert_stderr_has "bad.ini:2" "$1 names the line"
}
bad_config "unknown recompute module" strategy recompute_modules attention
bad_config "unmodelled recompute module" strategy recompute_modules core_attn,moe
bad_config "empty recompute module list" strategy recompute_modules ","
bad_config "optimizer moments in fp8" model optimizer_moments fp8
bad_config "optimizer moments not a datatype" model optimizer_moments half
bad_config "MoE activations in no datatype" model moe_activation_datatype int3
bad_config "probabilities in the activation not a boolean" model moe_probs_in_activation maybe
finish
