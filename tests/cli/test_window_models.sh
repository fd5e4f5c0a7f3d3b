#!/usr/bin/env bash
# Sliding-window models through the command line: the built-ins describe their window, a model file
# written from that description simulates bit for bit as the built-in does (the window survives the
# round trip), the window makes the step shorter than the same model without it, and a bad window in
# a model file is a one-line error naming the field (exit 2).
source "$(dirname "$0")/assert.sh"
PY=/usr/bin/python3

run_cmd models gpt-oss-20b --json
assert_status 0 "models gpt-oss-20b --json"
$PY -c "import json,sys; t=json.load(open(sys.argv[1]))['transformer']
assert (t['sliding_window'], t['full_attention_every'], t['head_dim'], t['moe']['experts']) == (128, 2, 64, 32), t" \
  "$WORK/out" && pass "gpt-oss-20b: window 128 on every other block" || fail "gpt-oss-20b description"
# The description as a model file, with and without the window (derived totals dropped).
$PY -c "import json,sys; j=json.load(open(sys.argv[1]))
for k in ('parameters', 'dense_parameters', 'active_parameters', 'forward_flops_per_sample',
          'backward_flops_per_sample', 'pipeline_units', 'layer_list'): j.pop(k)
json.dump(j, open(sys.argv[2], 'w'))
for k in ('sliding_window', 'full_attention_every'): j['transformer'].pop(k)
json.dump(j, open(sys.argv[3], 'w'))" "$WORK/out" "$WORK/oss.json" "$WORK/oss-full.json"

base=(--set topology.kind=switch --set topology.servers=2 --set server.gpus=8 --set server.device=h100
      --set model.datatype=bf16 --set strategy.tp=1 --set strategy.pp=2 --set strategy.ep=8
      --set strategy.microbatches=8 --set model.global_batch=64 --set strategy.recompute=full)
run_cmd simulate "${base[@]}" --set model.name=gpt-oss-20b --json
assert_status 0 "simulate gpt-oss-20b"
cp "$WORK/out" "$WORK/builtin.json"
run_cmd simulate "${base[@]}" --set model.name="$WORK/oss.json" --json
assert_status 0 "simulate its description as a model file"
cp "$WORK/out" "$WORK/file.json"
run_cmd simulate "${base[@]}" --set model.name="$WORK/oss-full.json" --json
assert_status 0 "simulate it without the window"
cp "$WORK/out" "$WORK/full.json"
$PY - "$SRC/tests/cli" "$WORK/builtin.json" "$WORK/file.json" "$WORK/full.json" << 'PY' && pass "the model file is the built-in bit for bit; the window shortens the step" || fail "window round trip"
import sys
sys.path.insert(0, sys.argv[1])
from json_clean import assert_same, load
a, b, c = (load(p, extra=("model",)) for p in sys.argv[2:])
assert_same(a, b)
assert a["iteration_time_s"] < c["iteration_time_s"], (a["iteration_time_s"], c["iteration_time_s"])
PY

# Bad windows in a model file: one line naming the field.
for field in '"sliding_window": 0' '"full_attention_every": 2' '"sliding_window": 64, "full_attention_every": 1'; do
  printf '{"name": "x", "transformer": {"layers": 2, "hidden": 64, "heads": 8, "seq_len": 16, "vocab": 100, %s}}' \
    "$field" > "$WORK/bad-model.json"
  run_cmd models "$WORK/bad-model.json"
  assert_status 2 "model file with $field"
  assert_one_error_line "model file with $field"
  key=$(echo "$field" | $PY -c "import sys; print(sys.stdin.read().split(',')[-1].split(':')[0].strip().strip('\"'))")
  assert_stderr_has "bad-model.json.transformer.$key" "model file with $field names the field"
done

finish
