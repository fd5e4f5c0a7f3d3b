"""Measured Megatron-LM training steps on Selene (DGX A100 80GB, 8 GPUs per server on NVSwitch, 8 x 200 Gb/s
HDR InfiniBand per server) against `toposweep simulate`, and nccl-tests bus bandwidths against
`toposweep collective` (docs/validation.md, "Megatron-LM on Selene").

Published numbers (read from the papers; sources in docs/validation.md):
  * Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models", Tables 3 and 5;
  * Narayanan et al. SC'21, "Efficient Large-Scale Language Model Training on GPU Clusters Using
    Megatron-LM", Table 1 (microbatch size and chunk count unpublished: searched here);
  * nccl-tests / NCCL bus bandwidths quoted by NCCL's maintainers (NVIDIA/nccl-tests#149, #212, NVIDIA/nccl#812).
Only Korthikanti et al. Table 4 (per-layer kernel times, not used here) calibrated device parameters: every
number below is held out."""
import json
import os

import tscli

# Selene as a network: one non-blocking switch (its three-level fat tree has full bisection), a DGX A100
# per server with eight HDR NICs. HDR link class: 96 % of the line rate (192 of 200 GB/s busbw,
# NVIDIA/nccl#812) and NCCL's 9.6 us per network step, i.e. 4.8 us on each of the two links through the
# switch. The GPU fabric comes from the a100 device (inputs/devices/a100.json).
SELENE = {"topology.kind": "switch", "topology.degree": 8, "topology.link_bandwidth": "200Gbps",
          "topology.link_efficiency": 0.96, "topology.link_latency": "4.8us", "server.gpus": 8,
          "server.device": "a100", "model.datatype": "fp16", "simulate.network_model": "analytical"}

# The Megatron-LM code each paper ran (its git history; docs/validation.md): software options, not factors.
# Korthikanti et al. (2022-05): asynchronous TP collective in backward (since 2021-09), gradient-accumulation
# fusion into fp32 main gradients (since 2022-02), blocking p2p, no DP overlap.
MEGATRON_2022 = {"strategy.tp_overlap": "backward", "strategy.grad_accum_fusion": "true",
                 "model.grad_datatype": "fp32", "strategy.dp_overlap": "false", "strategy.p2p_overlap": "false",
                 "strategy.scatter_gather": "true"}
# SC'21 (2021-04): blocking TP all-reduce, no gradient-accumulation fusion, fp16 gradients, blocking p2p,
# one gradient all-reduce after the backward.
MEGATRON_2021 = {"strategy.tp_overlap": "none", "strategy.grad_accum_fusion": "false",
                 "strategy.dp_overlap": "false", "strategy.p2p_overlap": "false", "strategy.scatter_gather": "true"}

SEQ, VOCAB = 2048, 51200

# Korthikanti et al. 2022, Tables 3 and 5: name, layers, hidden, heads, tp, pp, GPUs, batch, microbatch, chunks,
# full recompute (s), sequence parallelism + selective recompute (s).
TABLE5 = [("22B", 48, 6144, 64, 8, 1, 8, 4, 4, 1, 1.42, 1.10),
          ("175B", 96, 12288, 96, 8, 8, 64, 64, 1, 3, 18.13, 13.75),
          ("530B", 105, 20480, 128, 8, 35, 280, 280, 1, 3, 49.05, 37.83),
          ("1T", 128, 25600, 160, 8, 64, 512, 512, 1, 1, 94.42, 71.49)]
# Calculon (Isaev et al. SC'23) on the same cells, from its `llm-validation` run (our sign: model - measured).
CALCULON_T5 = {"22B": (1.40, 1.14), "175B": (18.03, 13.64), "530B": (49.89, 34.47), "1T": (90.08, 66.04)}

# Narayanan et al. SC'21 Table 1: billions of parameters, heads, hidden, layers, tp, pp, GPUs, batch,
# TFLOP/s per GPU.
SC21 = [(1.7, 24, 2304, 24, 1, 1, 32, 512, 137), (3.6, 32, 3072, 30, 2, 1, 64, 512, 138),
        (7.5, 32, 4096, 36, 4, 1, 128, 512, 142), (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135),
        (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138), (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140),
        (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148), (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155),
        (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163), (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163)]
MICROBATCH_SIZES = (1, 2, 4, 8)

# nccl-tests all_reduce bus bandwidth at large messages: label, servers, device, measured GB/s, source.
NCCL = [("8 x A100 (NVLink3, NVSwitch)", 1, "a100", 230, "NVIDIA/nccl-tests#149"),
        ("2 x DGX A100, ring (8 x HDR 200 Gb/s each)", 2, "a100", 192, "NVIDIA/nccl#812"),
        ("8 x H100 (NVLink4, NVSwitch), ring", 1, "h100", 370, "NVIDIA/nccl-tests#212")]


def pct(model, measured):
    return 100.0 * (model - measured) / measured


def model_file(work, name, layers, hidden, heads):
    """A GPT model file with Megatron's shapes (sequence 2048, vocabulary 51200, learned positions)."""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, f"megatron-{name}.json")
    with open(path, "w") as f:
        json.dump({"name": f"megatron-{name}", "transformer": {"layers": layers, "hidden": hidden, "heads": heads,
                                                              "seq_len": SEQ, "vocab": VOCAB, "max_positions": SEQ}},
                  f)
    return path


def strategy_sets(tp, pp, gpus, batch, mbs, chunks, recompute, sp):
    return {"topology.servers": max(1, gpus // 8), "model.global_batch": batch, "strategy.tp": tp,
            "strategy.pp": pp, "strategy.microbatch_size": mbs,
            "strategy.schedule": "interleaved" if chunks > 1 else "1f1b", "strategy.virtual_stages": chunks,
            "strategy.recompute": recompute, "strategy.sequence_parallel": "true" if sp else "false"}


def table5_calls(work):
    calls = []
    for name, L, h, a, tp, pp, gpus, batch, mbs, v, _, _ in TABLE5:
        # The committed model files (inputs/models/megatron-*.json) hold the same shapes.
        path = os.path.join(tscli.SOURCE_DIR, "inputs", "models", f"megatron-{name.lower()}.json")
        for recompute, sp in (("full", False), ("selective", True)):
            calls.append(("simulate", {**SELENE, **MEGATRON_2022, "model.name": path,
                                       **strategy_sets(tp, pp, gpus, batch, mbs, v, recompute, sp)}, [], []))
    return calls


def table5(work):
    """Eight rows: model, mode, measured s, simulated s, error %, Calculon error %, memory GiB."""
    results = tscli.run_many(table5_calls(work))
    rows = []
    for i, (name, *_, full_m, sel_m) in enumerate(TABLE5):
        for j, (mode, meas) in enumerate((("full recompute", full_m), ("SP + selective", sel_m))):
            r = results[2 * i + j]
            if isinstance(r, Exception):
                raise r
            t = r["iteration_time_s"]
            rows.append({"model": name, "mode": mode, "measured_s": meas, "simulated_s": t,
                         "error_pct": pct(t, meas) if t else None,
                         "calculon_error_pct": pct(CALCULON_T5[name][j], meas),
                         "memory_GiB": r["memory_per_gpu_bytes"] / 2**30, "feasible": r["feasible"]})
    return rows


def sc21_flops(batch, layers, hidden):
    """SC'21 eq. (3): FLOPs of one iteration with activation recomputation."""
    return 96.0 * batch * SEQ * layers * hidden**2 * (1 + SEQ / (6.0 * hidden) + VOCAB / (16.0 * layers * hidden))


def sc21_choices(row):
    """(microbatch size, chunks) Megatron-LM accepts: the chunks divide layers / pp, and interleaving needs
    the microbatch count to be a multiple of pp."""
    _, _, _, L, tp, pp, gpus, batch, _ = row
    dp = gpus // (tp * pp)
    out = []
    for mbs in MICROBATCH_SIZES:
        if (batch // dp) % mbs:
            continue
        micro = batch // dp // mbs
        chunks = [1] if pp == 1 else [v for v in range(1, L // pp + 1) if (L // pp) % v == 0 and (v == 1 or micro % pp == 0)]
        out += [(mbs, v) for v in chunks]
    return out


def sc21_call(work, row, mbs, v):
    P, heads, h, L, tp, pp, gpus, batch, _ = row
    path = model_file(work, f"{P:g}B", L, h, heads)
    return ("simulate", {**SELENE, **MEGATRON_2021, "model.name": path,
                         **strategy_sets(tp, pp, gpus, batch, mbs, v, "full", False)}, [], [])


def sc21(work, choices=None):
    """Ten rows. `choices`: {params: [(mbs, chunks), ...]} to try (default: every accepted choice). The best
    feasible choice wins, as the paper reports the best configuration it found."""
    plan = [(row, c) for row in SC21 for c in (choices[row[0]] if choices else sc21_choices(row))]
    results = tscli.run_many([sc21_call(work, row, mbs, v) for row, (mbs, v) in plan])
    rows = {}
    for (row, (mbs, v)), r in zip(plan, results):
        if isinstance(r, Exception):
            raise r
        P, _, h, L, _, _, gpus, batch, meas = row
        entry = rows.setdefault(P, {"params_B": P, "tp": row[4], "pp": row[5], "gpus": gpus, "batch": batch,
                                    "measured_tflops": meas, "tried": []})
        if not r["feasible"]:
            entry["tried"].append((mbs, v, None))
            continue
        tflops = sc21_flops(batch, L, h) / r["iteration_time_s"] / gpus / 1e12
        entry["tried"].append((mbs, v, tflops))
    out = []
    for P, e in rows.items():
        ok = [t for t in e["tried"] if t[2] is not None]
        best = max(ok, key=lambda t: t[2]) if ok else (None, None, None)
        out.append({**e, "microbatch": best[0], "chunks": best[1], "simulated_tflops": best[2],
                    "error_pct": pct(best[2], e["measured_tflops"]) if best[2] else None,
                    "feasible_choices": len(ok), "choices": len(e["tried"]),
                    "range_tflops": (min(t[2] for t in ok), max(t[2] for t in ok)) if ok else (None, None)})
    return out


def nccl():
    """Three rows: label, measured and simulated bus bandwidth (GB/s), error %."""
    calls = []
    for _, servers, device, _, _ in NCCL:
        calls.append(("collective", {**SELENE, "server.device": device, "topology.servers": servers}, [],
                      ["--op", "allreduce", "--bytes", "8GiB"]))
    rows = []
    for (label, servers, device, meas, source), r in zip(NCCL, tscli.run_many(calls)):
        if isinstance(r, Exception):
            raise r
        bw = r["busbw_Bps"] / 1e9
        rows.append({"case": label, "ranks": r["ranks"], "algorithm": r["algorithm"], "measured_GBps": meas,
                     "simulated_GBps": bw, "error_pct": pct(bw, meas), "source": source})
    return rows
