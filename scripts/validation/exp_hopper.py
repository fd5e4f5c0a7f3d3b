"""The measured H100 and H200 layers (docs/validation/reference/hopper/{h100,h200}.json, `layers`: one transformer
layer's forward + backward on one tensor-parallel rank, no communication, PyTorch 2.11 bf16) against `toposweep
simulate` with the h100 / h200 devices, whose per-operator numbers were fitted on the operator tables of the same
files (scripts/validation/fit_hopper.py). The layers calibrated nothing: they are held out.

One layer's compute through the CLI: tp GPUs on one server (dp 1, pp 1, no sequence parallelism, TP collectives
not overlapped so they are reported as exposed communication and not as compute), the `compute_time_s` of a
2-layer model minus that of a 1-layer model, at two microbatch counts; the slope over microbatches is one
microbatch's forward + backward of one layer (the optimizer step, once per iteration, drops out).

How the measured layers ran (layer_bench.py) and what the calls set to match:
  * no biases in any layer (F.linear without bias, norms with a scale only): `biases: false`;
  * bf16 weights whose gradients PyTorch accumulates in bf16 between repetitions: `model.grad_datatype = bf16`,
    `strategy.grad_accum_fusion = false` (a read-add-write of each weight gradient);
  * `flash` rows: PyTorch's SDPA with FlashAttention-2 and cuDNN allowed. PyTorch prefers cuDNN's attention on
    sm90 / sm100 when the runtime cuDNN is newer than 9.15 (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp,
    check_prefer_cudnn_attention; pytorch/pytorch#169849); the measurements ran cuDNN 9.19 on sm90, so these rows
    ran cuDNN's kernels, the ones the device files' flash fractions were fitted on (Transformer Engine's too).
    `unfused` rows: `model.fused_attention = false` with `model.softmax = eager`: layer_bench.py's attention
    core materialises the scores and runs scale, masked_fill, .float(), softmax, .to(bf16) and dropout as
    separate PyTorch kernels (Megatron's unfused fallback), not Megatron's fused scale-mask-softmax;
  * Llama rows: kv_heads 8, ffn_hidden, gated_mlp (SwiGLU), untied embeddings; `norm: rmsnorm` and
    `position: rotary` when the binary accepts them (tried first, dropped if it rejects them: `llama_keys` in
    each row says which).
The embedding and head cancel in the difference, so the vocabulary is kept small."""
import json
import os

import fit_hopper
import tscli

REF = fit_hopper.REF

SHAPES = {  # hidden, ffn, heads, kv_heads, gated
    "gpt3-22b": (6144, 4 * 6144, 64, 64, False),
    "gpt3-175b": (12288, 4 * 12288, 96, 96, False),
    "gpt-530b": (20480, 4 * 20480, 128, 128, False),
    "llama3-8b": (4096, 14336, 32, 8, True),
    "llama3-70b": (8192, 28672, 64, 8, True),
    "llama3-405b": (16384, 53248, 128, 8, True),
}
LLAMA_KEYS = {"norm": "rmsnorm", "position": "rotary"}
MICROBATCHES = (4, 8)


def pct(model, measured):
    return 100.0 * (model - measured) / measured


def measured_rows():
    rows = []
    for gpu in ("h100", "h200"):
        with open(os.path.join(REF, f"{gpu}.json")) as f:
            for r in json.load(f)["layers"]:
                rows.append({"gpu": gpu, **r})
    return rows


def model_path(work, name, seq, layers, llama_keys):
    h, ffn, heads, kvh, gated = SHAPES[name]
    t = {"layers": layers, "hidden": h, "heads": heads, "seq_len": seq, "vocab": 1024, "max_positions": seq,
         "biases": False, "tied_embeddings": False}
    if gated or kvh != heads:
        t.update(kv_heads=kvh, ffn_hidden=ffn, gated_mlp=gated)
        if llama_keys:
            t.update(LLAMA_KEYS)
            del t["max_positions"]  # rotary positions: no learned table
    tag = "-llamakeys" if (gated and llama_keys) else ""
    path = os.path.join(work, f"hopper-{name}-s{seq}-{layers}layer{tag}.json")
    with open(path, "w") as f:
        json.dump({"name": f"hopper-{name}-{layers}", "transformer": t}, f)
    return path


def llama_keys_accepted(work):
    """Whether the binary takes the RMSNorm / rotary keys (another change adds them)."""
    try:
        tscli.run("models", {}, [], [model_path(work, "llama3-8b", 8192, 1, True)])
        return True
    except tscli.CliError:
        return False


def calls_for(work, row, device, llama_keys):
    tp, mbs = row["tp"], row["mbs"]
    sets = {"topology.kind": "switch", "topology.servers": 1, "topology.degree": 1, "server.gpus": tp,
            "topology.link_bandwidth": "400Gbps", "server.device": device, "model.datatype": "bf16",
            "model.grad_datatype": "bf16", "simulate.network_model": "analytical", "strategy.tp": tp,
            "strategy.pp": 1, "strategy.dp": 1, "strategy.microbatch_size": mbs, "strategy.schedule": "1f1b",
            "strategy.recompute": row["recompute"], "strategy.sequence_parallel": "false",
            "strategy.tp_overlap": "none", "strategy.grad_accum_fusion": "false", "strategy.zero": 0,
            "model.fused_attention": "true" if row["attention"] == "flash" else "false"}
    if row["attention"] == "unfused":  # layer_bench.py's core: scale, masked_fill, .float(), softmax, .to(bf16)
        sets["model.softmax"] = "eager"
    calls = []
    for micro in MICROBATCHES:
        for layers in (1, 2):
            calls.append(("simulate", {**sets, "model.name": model_path(work, row["model"], row["seq"], layers,
                                                                         llama_keys),
                                       "model.global_batch": mbs * micro}, [], []))
    return calls


def run(work):
    """32 rows: gpu, model, tp, seq, mbs, attention, recompute, measured and simulated forward + backward (ms),
    error %."""
    os.makedirs(work, exist_ok=True)
    keys = llama_keys_accepted(work)
    rows = measured_rows()
    calls = []
    for r in rows:
        calls += calls_for(work, r, r["gpu"], keys)
    res = tscli.run_many(calls)
    out = []
    n = 2 * len(MICROBATCHES)
    for i, r in enumerate(rows):
        got = res[n * i:n * (i + 1)]
        for g in got:
            if isinstance(g, Exception):
                raise g
        delta = [got[2 * j + 1]["compute_time_s"] - got[2 * j]["compute_time_s"] for j in range(len(MICROBATCHES))]
        per_micro = (delta[1] - delta[0]) / (MICROBATCHES[1] - MICROBATCHES[0])
        sim_ms = per_micro * 1e3
        out.append({"gpu": r["gpu"], "model": r["model"], "tp": r["tp"], "seq": r["seq"], "mbs": r["mbs"],
                    "attention": r["attention"], "recompute": r["recompute"],
                    "llama_keys": bool(keys) if SHAPES[r["model"]][4] else None,
                    "measured_ms": r["fwd_bwd_ms"], "simulated_ms": sim_ms, "error_pct": pct(sim_ms, r["fwd_bwd_ms"])})
    return out


# Bytes per score element of each kernel of the eager chain, forward and backward (block_softmax.cpp's
# counts, e = 2). The batched GEMMs' backward is counted here as two of their forward each (the model runs
# one more of QK^T's shape and three of x V's: the core's total is the model's).
EAGER_BYTES = {"scale_mul": (4, 4), "masked_fill": (4, 4), "to_fp32": (6, 6), "softmax_fp32": (8, 12),
               "to_bf16": (6, 6), "dropout": (5, 5)}


def bmm_seconds(r, op, gemm_Bps, mem_Bps):
    """layer_cost.cpp gemm_seconds of the batched attention GEMM (bf16 operands and output): its FLOPs at the
    GEMM fraction or its bytes at the memory bandwidth, whichever is longer."""
    b, s, d = r["bh"], r["seq"], r["d"]
    M, N, K = (s, s, d) if op == "qk_bmm" else (s, d, s)
    return max(2 * M * N * K * b / gemm_Bps, b * (2 * (M * K + K * N) + 2 * M * N) / mem_Bps)


def eager_kernels(gpu="h100"):
    """The eager attention core kernel by kernel (op_bench.py's `unfused_attention` table, measured on one H100
    in isolation, CUDA events around each call, median of 20) against the device file's memory-bound bandwidth
    and GEMM fraction: a check of the kernel list and its byte counts, nothing fitted."""
    with open(os.path.join(REF, f"{gpu}_ops.json")) as f:
        table = json.load(f)["unfused_attention"]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "inputs", "devices", f"{gpu}.json")) as f:
        dev = json.load(f)
    mem = fit_hopper.HBM[gpu] * dev["memory_efficiency"]
    gemm = dev["peak_flops"]["bf16"] * dev["gemm_efficiency"]
    rows = []
    for r in table:
        if "error" in r:
            continue
        el, d = r["score_elements"], r["d"]
        if r["op"] in EAGER_BYTES:
            fb, bb = EAGER_BYTES[r["op"]]
            model = (fb * el / mem * 1e3, bb * el / mem * 1e3)
        elif r["op"] in ("qk_bmm", "pv_bmm"):
            model = (2 * bmm_seconds(r, r["op"], gemm, mem) * 1e3,) * 2
            model = (model[0] / 2, model[1])
        elif r["op"] == "core":  # the whole chain in one call: the model's block_forward / block_backward sum
            qk, pv = bmm_seconds(r, "qk_bmm", gemm, mem), bmm_seconds(r, "pv_bmm", gemm, mem)
            fb = sum(v[0] for v in EAGER_BYTES.values())
            bb = sum(v[1] for v in EAGER_BYTES.values())
            model = ((qk + pv + fb * el / mem) * 1e3, (qk + 3 * pv + bb * el / mem) * 1e3)
        else:
            continue
        rows.append({"case": r["case"], "op": r["op"], "measured_fwd_ms": r["fwd_ms"],
                     "measured_bwd_ms": r["bwd_ms"], "model_fwd_ms": model[0], "model_bwd_ms": model[1]})
    return rows


def summary(rows):
    """max / mean |error| per GPU (and both), over all rows and over the fused-attention (`flash`) rows."""
    s = {}
    for gpu in ("h100", "h200", "all"):
        for subset in ("", "_flash", "_unfused"):
            e = [abs(r["error_pct"]) for r in rows
                 if gpu in ("all", r["gpu"]) and (not subset or r["attention"] == subset[1:])]
            s[gpu + subset] = {"rows": len(e), "max_abs_pct": max(e), "mean_abs_pct": sum(e) / len(e)}
    return s


if __name__ == "__main__":
    import tempfile

    rows = run(tempfile.mkdtemp())
    for r in rows:
        print(f"{r['gpu']} {r['model']:12s} tp{r['tp']} s{r['seq']} b{r['mbs']} {r['attention']:8s} "
              f"{r['recompute']:9s} measured {r['measured_ms']:7.3f} simulated {r['simulated_ms']:7.3f} "
              f"{r['error_pct']:+6.1f} %")
    print(json.dumps(summary(rows), indent=1))
