#!/usr/bin/env bash
# Llama-3-class models through the command line: the built-ins' descriptions, `model.seq_len`
# giving exactly what a model file with that sequence length gives (simulate --json identical),
# and its errors (one line naming the key and where it was set, exit 2).
source "$(dirname "$0")/assert.sh"
PY=/usr/bin/python3

for m in llama3-8b:8030261248 llama3-70b:70553706496 llama3-405b:405853388800; do
  run_cmd models "${m%%:*}" --json
  assert_status 0 "models ${m%%:*} --json"
  $PY -c "import json,sys; j=json.load(open(sys.argv[1])); t=j['transformer']
assert j['parameters'] == float(sys.argv[2]), j['parameters']
assert (t['mlp'], t['norm'], t['position'], t['kv_heads'], t['vocab'], t['seq_len'], t['max_positions']) == \
    ('swiglu', 'rmsnorm', 'rotary', 8, 128256, 8192, 0), t" "$WORK/out" "${m##*:}" \
    && pass "${m%%:*}: parameters and shape" || fail "${m%%:*} description"
done

base=(--set topology.kind=switch --set topology.servers=2 --set server.gpus=8 --set server.device=h100
      --set model.datatype=bf16 --set strategy.tp=8 --set strategy.pp=2 --set strategy.microbatches=4
      --set model.global_batch=8 --set strategy.sequence_parallel=true --set strategy.recompute=selective)

# The override against a model file written with that sequence length (the description with its
# derived totals dropped: they change with the length).
run_cmd models llama3-8b --json
$PY -c "import json,sys; j=json.load(open(sys.argv[1])); j['transformer']['seq_len'] = 4096
for k in ('parameters', 'dense_parameters', 'forward_flops_per_sample', 'backward_flops_per_sample',
          'pipeline_units', 'layer_list'): j.pop(k)
json.dump(j, open(sys.argv[2], 'w'))" "$WORK/out" "$WORK/llama3-8b-4k.json"
run_cmd simulate "${base[@]}" --set model.name=llama3-8b --set model.seq_len=4096 --json
assert_status 0 "simulate llama3-8b with model.seq_len = 4096"
cp "$WORK/out" "$WORK/override.json"
run_cmd simulate "${base[@]}" --set model.name="$WORK/llama3-8b-4k.json" --json
assert_status 0 "simulate the llama3-8b file with seq_len 4096"
cp "$WORK/out" "$WORK/file.json"
run_cmd simulate "${base[@]}" --set model.name=llama3-8b --json
cp "$WORK/out" "$WORK/default.json"
# Equal but for wall-clock fields and `model`, which echoes model.name (here the file's path).
$PY - "$SRC/tests/cli" "$WORK/override.json" "$WORK/file.json" "$WORK/default.json" << 'PY' && pass "model.seq_len = a model file with that seq_len" || fail "override differs from the file"
import sys
sys.path.insert(0, sys.argv[1])
from json_clean import assert_same, load
a, b, c = (load(p, extra=("model",)) for p in sys.argv[2:])
assert_same(a, b)
assert a != c, "the override changed nothing"
PY

# Errors: one line, exit 2, naming the key and the line that set it.
bad_config() {  # DESCRIPTION MODEL SEQ_LEN EXPECTED-TEXT
  printf '[model]\nname = %s\nseq_len = %s\n' "$2" "$3" > "$WORK/bad.ini"
  run_cmd simulate --config "$WORK/bad.ini" --set topology.kind=switch --set topology.servers=2 --set server.gpus=8
  assert_status 2 "$1"
  assert_one_error_line "$1"
  assert_stderr_has "model.seq_len" "$1 names the key"
  assert_stderr_has "bad.ini:3" "$1 names the line"
  assert_stderr_has "$4" "$1 says why"
}
bad_config "seq_len beyond learned positions" gpt3-1.3b 4096 "2048 learned positions"
bad_config "seq_len on a vision model" resnet50 224 "not a transformer"
bad_config "seq_len zero" llama3-8b 0 "model.seq_len"
bad_config "seq_len not a number" llama3-8b long "model.seq_len"
bad_config "seq_len fractional" llama3-8b 1024.5 "model.seq_len"
run_cmd simulate "${base[@]}" --set model.name=gpt3-1.3b --set model.seq_len=2049
assert_status 2 "--set model.seq_len past max_positions"
assert_one_error_line "--set model.seq_len past max_positions"
# A learned-position model below its table, and a rotary one far beyond its pre-training length.
run_cmd simulate "${base[@]}" --set model.name=gpt3-1.3b --set model.seq_len=1024 --json
assert_status 0 "gpt3-1.3b at seq_len 1024"
run_cmd models llama3-8b --json
assert_status 0 "models llama3-8b"

# Model files: a bad mlp / norm / position value is a one-line error naming the field.
for field in '"mlp": "relu"' '"norm": "batchnorm"' '"position": "alibi"' '"mlp": "gelu", "gated_mlp": true'; do
  printf '{"name": "x", "transformer": {"layers": 2, "hidden": 64, "heads": 8, "seq_len": 16, "vocab": 100, %s}}' \
    "$field" > "$WORK/bad-model.json"
  run_cmd models "$WORK/bad-model.json"
  assert_status 2 "model file with $field"
  assert_one_error_line "model file with $field"
  assert_stderr_has "bad-model.json.transformer.${field:1:3}" "model file with $field names the field"
done

finish
