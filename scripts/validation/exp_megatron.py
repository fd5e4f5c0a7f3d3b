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


def table5_calls(work, device=None):
    calls = []
    for name, L, h, a, tp, pp, gpus, batch, mbs, v, _, _ in TABLE5:
        # The committed model files (inputs/models/megatron-*.json) hold the same shapes.
        path = os.path.join(tscli.SOURCE_DIR, "inputs", "models", f"megatron-{name.lower()}.json")
        for recompute, sp in (("full", False), ("selective", True)):
            calls.append(("simulate", {**SELENE, **MEGATRON_2022, "model.name": path,
                                       **strategy_sets(tp, pp, gpus, batch, mbs, v, recompute, sp),
                                       **({"server.device": device} if device else {})}, [], []))
    return calls


def table5(work, device=None):
    """Eight rows: model, mode, measured s, simulated s, error %, Calculon error %, memory GiB. `device`: another
    device file (a sensitivity)."""
    results = tscli.run_many(table5_calls(work, device))
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


def sc21_call(work, row, mbs, v, software=None):
    P, heads, h, L, tp, pp, gpus, batch, _ = row
    path = model_file(work, f"{P:g}B", L, h, heads)
    return ("simulate", {**SELENE, **(software or MEGATRON_2021), "model.name": path,
                         **strategy_sets(tp, pp, gpus, batch, mbs, v, "full", False)}, [], [])


def sc21(work, choices=None, software=None):
    """Ten rows. `choices`: {params: [(mbs, chunks), ...]} to try (default: every accepted choice). The best
    feasible choice wins, as the paper reports the best configuration it found. `software`: the Megatron-LM
    options (default MEGATRON_2021, the code the paper ran)."""
    plan = [(row, c) for row in SC21 for c in (choices[row[0]] if choices else sc21_choices(row))]
    results = tscli.run_many([sc21_call(work, row, mbs, v, software) for row, (mbs, v) in plan])
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


# Narayanan et al. SC'21 Table 2, the PTD-P rows (microbatch 1 published; chunks searched): params (B), tp x pp,
# batch, GPUs, TFLOP/s per GPU. 174.6B: 96 layers, h 12288, 96 heads; 529.6B: 105, 20480, 128.
SC21_T2 = [(174.6, 96, 1536, 384, 153), (174.6, 96, 1536, 768, 149), (174.6, 96, 1536, 1536, 141),
           (529.6, 280, 2240, 560, 171), (529.6, 280, 2240, 1120, 167), (529.6, 280, 2240, 2240, 159)]


def sc21_table2(work):
    plan = []
    for P, mp, batch, gpus, meas in SC21_T2:
        L, h, heads = (96, 12288, 96) if P < 200 else (105, 20480, 128)
        tp, pp = 8, mp // 8
        dp = gpus // mp
        micro = batch // dp
        for v in [v for v in range(1, L // pp + 1) if (L // pp) % v == 0 and (v == 1 or micro % pp == 0)]:
            row = (P, heads, h, L, tp, pp, gpus, batch, meas)
            plan.append((row, v))
    results = tscli.run_many([sc21_call(work, row, 1, v) for row, v in plan])
    best = {}
    for (row, v), r in zip(plan, results):
        if isinstance(r, Exception):
            raise r
        if not r["feasible"]:
            continue
        P, _, h, L, tp, pp, gpus, batch, meas = row
        tflops = sc21_flops(batch, L, h) / r["iteration_time_s"] / gpus / 1e12
        key = (P, gpus)
        if key not in best or tflops > best[key]["simulated_tflops"]:
            best[key] = {"params_B": P, "tp": tp, "pp": pp, "dp": gpus // (tp * pp), "gpus": gpus, "batch": batch,
                         "chunks": v, "measured_tflops": meas, "simulated_tflops": tflops,
                         "error_pct": pct(tflops, meas)}
    return list(best.values())


def korthikanti_dp8(work):
    """Korthikanti et al. Sec. 6.3: 530B, SP + selective, 8-way data parallelism (2240 GPUs, batch 2240): 39.15 s,
    'we do not use any overlapping of gradient all-reduces'."""
    path = os.path.join(tscli.SOURCE_DIR, "inputs", "models", "megatron-530b.json")
    r = tscli.run("simulate", {**SELENE, **MEGATRON_2022, "model.name": path,
                               **strategy_sets(8, 35, 2240, 2240, 1, 3, "selective", True)})
    return {"measured_s": 39.15, "simulated_s": r["iteration_time_s"], "error_pct": pct(r["iteration_time_s"], 39.15)}


def memory_feasibility(work):
    """Korthikanti et al. Sec. 6.1: only SP + selective and full recomputation fit the four models in 80 GiB. The
    allocator reserve (6 GiB) was chosen inside the bounds these statements give, so this is a consistency check."""
    modes = [("none", "none", False, False), ("SP", "none", True, False), ("selective", "selective", False, False),
             ("SP + selective", "selective", True, True), ("full", "full", False, True)]
    calls, keys = [], []
    for name, L, h, a, tp, pp, gpus, batch, mbs, v, _, _ in TABLE5:
        path = os.path.join(tscli.SOURCE_DIR, "inputs", "models", f"megatron-{name.lower()}.json")
        for label, rc, sp, fits in modes:
            calls.append(("simulate", {**SELENE, **MEGATRON_2022, "model.name": path,
                                       **strategy_sets(tp, pp, gpus, batch, mbs, v, rc, sp)}, [], []))
            keys.append((name, label, fits))
    rows = []
    for (name, label, fits), r in zip(keys, tscli.run_many(calls)):
        if isinstance(r, Exception):
            raise r
        rows.append({"model": name, "mode": label, "memory_GiB": r["memory_per_gpu_bytes"] / 2**30,
                     "fits": bool(r["feasible"]), "paper_fits": fits})
    return rows


def table4_layers(work):
    """Korthikanti et al. Table 4 (the calibration set) through the CLI: one 22B layer's forward + backward per
    microbatch, as the difference between a 2-layer and a 1-layer model on one DGX (32 microbatches of 4; the extra
    layer's share of the optimizer step, 0.06 ms per microbatch, is included)."""
    rows = []
    measured = [("baseline", "none", False, 19.6), ("sequence parallel", "none", True, 19.0),
                ("full recompute", "full", False, 27.2), ("selective", "selective", False, 20.9),
                ("selective + SP", "selective", True, 20.3)]
    paths = {L: model_file(work, f"22B-{L}layer", L, 6144, 64) for L in (1, 2)}
    calls = []
    for _, rc, sp, _ in measured:
        for L in (1, 2):
            calls.append(("simulate", {**SELENE, **MEGATRON_2022, "model.name": paths[L],
                                       **strategy_sets(8, 1, 8, 128, 4, 1, rc, sp)}, [], []))
    res = tscli.run_many(calls)
    for i, (label, _, _, meas) in enumerate(measured):
        a, b = res[2 * i], res[2 * i + 1]
        for r in (a, b):
            if isinstance(r, Exception):
                raise r
        ms = (b["iteration_time_s"] - a["iteration_time_s"]) / 32 * 1e3
        rows.append({"experiment": label, "measured_ms": meas, "simulated_ms": ms, "error_pct": pct(ms, meas)})
    return rows


# Held out, other hardware: Megatron-Core r0.8.0 weak scaling on H100 (Megatron-LM README, images/model_table.png,
# commit f2e5db402c, 2024-07-15; the weak-scaling figure's legend says "Megatron-Core r0.8.0"): seq 4096, vocab
# 131072. name, heads, hidden, layers, tp, pp, dp, GPUs, batch, TFLOP/s per GPU.
MCORE_H100 = [("1.7B", 16, 2048, 24, 1, 1, 48, 48, 192, 408.8), ("7.1B", 32, 4096, 30, 2, 1, 48, 96, 192, 465.9),
              ("16B", 48, 6144, 32, 4, 1, 48, 192, 192, 489.1), ("32B", 56, 7168, 48, 8, 1, 48, 384, 192, 459.6),
              ("70B", 64, 8192, 84, 8, 2, 48, 768, 384, 419.7), ("119B", 80, 10240, 92, 8, 4, 48, 1536, 768, 420.5),
              ("177B", 96, 12288, 96, 8, 6, 48, 2304, 1152, 432.8), ("314B", 128, 16384, 96, 8, 8, 48, 3072, 1536, 474.4),
              ("462B", 144, 18432, 112, 8, 16, 48, 6144, 3072, 459.9)]
# What each run used, and where it comes from (docs/validation.md, section 6, lists the same):
#  * published in the table: tp, pp, dp, GPUs, global batch; README (f2e5db402c / 937571cfd4): seq 4096, vocab
#    131072, "--overlap-grad-reduce --overlap-param-gather" (DP: strategy.param_gather_overlap = true),
#    "--tp-comm-overlap" (TP), PP overlap "enabled by
#    default"; bf16: the table's MFU column is TFLOP/s / 989 (the H100's dense bf16 peak).
#  * implied by Megatron-Core r0.8.0's code (tag core_r0.8.0, baf94af3c6): --overlap-param-gather asserts
#    --use-distributed-optimizer (ZeRO-1, megatron/training/arguments.py); --tp-comm-overlap asserts
#    --sequence-parallel (SP on every TP > 1 run); bf16 accumulates and reduces gradients in fp32; gradient-
#    accumulation fusion and Transformer Engine layers (cuDNN fused attention on Hopper) are defaults; no
#    recomputation (--recompute-granularity defaults to None); tied embeddings (default); the DDP bucket is
#    max(40M, 1M x dp) = 48M gradient elements (megatron/core/distributed/distributed_data_parallel.py).
#  * inferred: r0.8.0 overlaps p2p only under the interleaved schedule (arguments.py sets overlap_p2p_comm = False
#    otherwise), so "PP overlap enabled" means the PP > 1 runs were interleaved. 119B (23 layers per stage) and
#    462B (7) are primes: interleaving there means one layer per virtual stage.
#  * NOT published (README, figures, scripts; NVIDIA/Megatron-LM#1571 asks for the scripts, unanswered): the
#    microbatch size and the virtual-stage count of 70B / 177B / 314B. For these the best over the admissible
#    values is taken (microbatch in {1, 2, 4}; chunks > 1 dividing the layers per stage, with the microbatch
#    count a multiple of pp), i.e. optimistic by construction; the columns `range_*` give the spread.
# DGX H100: 8 x NDR 400 Gb/s per server, efficiency ASSUMED equal to HDR's 0.96.
DGX_H100 = {**SELENE, "server.device": "h100", "topology.link_bandwidth": "400Gbps", "model.datatype": "bf16"}
MCORE = {"strategy.tp_overlap": "full", "strategy.grad_accum_fusion": "true", "model.grad_datatype": "fp32",
         "strategy.dp_overlap": "true", "strategy.p2p_overlap": "true", "strategy.zero": 1,
         "strategy.param_gather_overlap": "true", "model.fused_attention": "true"}
MCORE_MICROBATCH = (1, 2, 4)


def mcore_bucket(dp, grad_bytes=4):
    """Megatron-Core's DDP bucket with overlap (r0.8.0 on): max(40M, 1M x dp) gradient elements of grad_bytes
    (fp32 unless the gradients are reduced in bf16)."""
    return {"strategy.bucket_size": f"{grad_bytes * max(40, dp)}MB"}


def mcore_flops(batch, L, h):
    """Megatron-Core's num_floating_point_operations (megatron/training/training.py, r0.8.0) for a GPT with a 4h
    MLP and no GQA: 72 B s L h^2 (1 + s/6h + V/12hL)."""
    return 72.0 * batch * 4096 * L * h * h * (1 + 4096 / (6 * h) + 131072 / (12 * h * L))


def mcore_model(work, name, heads, h, L):
    path = os.path.join(work, f"mcore-{name}.json")
    with open(path, "w") as f:
        json.dump({"name": f"mcore-{name}", "transformer": {"layers": L, "hidden": h, "heads": heads,
                                                          "seq_len": 4096, "vocab": 131072, "max_positions": 4096}}, f)
    return path


def mcore_plan(L, pp, dp, batch, interleaved=True):
    """(microbatch, chunks) each run may have used: interleaved (pp > 1) with chunks > 1 dividing the layers per
    stage and the microbatch count a multiple of pp (Megatron's check), or 1F1B (interleaved=False)."""
    plan = []
    for mbs in MCORE_MICROBATCH:
        if (batch // dp) % mbs:
            continue
        micro = batch // dp // mbs
        if pp == 1 or not interleaved:
            plan.append((mbs, 1))
            continue
        plan += [(mbs, v) for v in range(2, L // pp + 1) if (L // pp) % v == 0 and micro % pp == 0]
    return plan


def h100_exploratory(work):
    rows = []
    for name, heads, h, L, tp, pp, dp, gpus, batch, meas in MCORE_H100:
        path = mcore_model(work, name, heads, h, L)
        plan = [(mbs, v, True) for mbs, v in mcore_plan(L, pp, dp, batch)]
        if pp > 1:  # the sensitivity to the inferred interleaving: 1F1B as published flags would read
            plan += [(mbs, v, False) for mbs, v in mcore_plan(L, pp, dp, batch, interleaved=False)]
        calls = [("simulate", {**DGX_H100, **MCORE, "model.name": path, **mcore_bucket(dp),
                               **strategy_sets(tp, pp, gpus, batch, mbs, v, "none", tp > 1)}, [], [])
                 for mbs, v, _ in plan]
        flops = mcore_flops(batch, L, h)
        used, other = [], []
        for (mbs, v, inter), r in zip(plan, tscli.run_many(calls)):
            if isinstance(r, Exception):
                raise r
            if not r["feasible"]:
                continue
            tf = flops / r["iteration_time_s"] / gpus / 1e12
            (used if inter else other).append((tf, mbs, v, r))
        tf, mbs, v, r = max(used, key=lambda x: x[0])
        lo, hi = min(x[0] for x in used), max(x[0] for x in used)
        row = {"model": name, "tp": tp, "pp": pp, "dp": dp, "gpus": gpus, "batch": batch, "measured_tflops": meas,
               "simulated_tflops": tf, "error_pct": pct(tf, meas),
               "microbatch": mbs, "chunks": v, "recompute": "none", "sequence_parallel": tp > 1,
               "schedule": "interleaved" if v > 1 else "1f1b",
               "microbatch_source": "not published: best of {1, 2, 4}" if len(used) > 1 else "not published",
               "chunks_source": ("-" if pp == 1 else
                                 "inferred (p2p overlap => interleaved; layers/stage prime => 1 layer per chunk)"
                                 if (L // pp) in (7, 23) else
                                 "inferred interleaved; count not published: best of admissible"),
               "range_lo_error_pct": pct(lo, meas), "range_hi_error_pct": pct(hi, meas),
               "iteration_s": r["iteration_time_s"], "measured_iteration_s": flops / (meas * 1e12 * gpus),
               "compute_s": r["compute_time_s"], "exposed_comm_s": r["exposed_comm_time_s"],
               "bubble_s": r["bubble_time_s"]}
        for k, val in r["breakdown"]["comm_busy_s"].items():
            if val:
                row[f"busy_{k}_s"] = val
        if other:
            tf1 = max(x[0] for x in other)
            row["error_1f1b_pct"] = pct(tf1, meas)
        # Sensitivities, not fits: the same configuration on an H100 whose GEMMs all run at 0.60 of peak (the
        # operator table's K <= 2048 shapes), or whose SM clock is 13 % lower (peak FLOP/s x 0.87, HBM unchanged).
        # And the same run with its data-parallel collectives on the device's collective_sms SMs while they overlap
        # compute (strategy.dp_sms; NCCL's channel count for these runs is not published).
        same = {**DGX_H100, **MCORE, "model.name": path, **mcore_bucket(dp),
                **strategy_sets(tp, pp, gpus, batch, mbs, v, "none", tp > 1)}
        sens = tscli.run_many([("simulate", {**same, "server.device": dev}, [], [])
                               for dev in mcore_sensitivity_devices(work)]
                              + [("simulate", {**same, "strategy.dp_sms": h100_collective_sms()}, [], [])])
        for key, rs in zip(("error_gemm060_pct", "error_clock87_pct", "error_dp_sms_pct"), sens):
            if isinstance(rs, Exception):
                raise rs
            row[key] = pct(flops / rs["iteration_time_s"] / gpus / 1e12, meas)
        row["dp_sms"] = h100_collective_sms()
        rows.append(row)
    return rows


def h100_collective_sms():
    """The SMs the h100 device file gives a collective (its intra_server.collective_sms)."""
    with open(os.path.join(tscli.SOURCE_DIR, "inputs", "devices", "h100.json")) as f:
        return json.load(f)["intra_server"]["collective_sms"]


def mcore_sensitivity_devices(work):
    with open(os.path.join(tscli.SOURCE_DIR, "inputs", "devices", "h100.json")) as f:
        base = json.load(f)
    paths = []
    for name, change in (("h100-gemm060", {"gemm_efficiency": 0.60}),
                         ("h100-clock87", {"peak_flops": {k: 0.87 * v for k, v in base["peak_flops"].items()}})):
        path = os.path.join(work, f"{name}.json")
        with open(path, "w") as f:
            json.dump({**base, "name": name, **change}, f)
        paths.append(path)
    return paths


def calculon_case(work):
    """The issue's side-by-side with Calculon: GPT-3 175B (Korthikanti's shape) on 64 GPUs, t8 p8, batch 3072,
    microbatch 1, full recompute, 1F1B. Calculon (its example): total 808.1 s, forward + backward + recompute
    681.7 s."""
    path = os.path.join(tscli.SOURCE_DIR, "inputs", "models", "megatron-175b.json")
    r = tscli.run("simulate", {**SELENE, **MEGATRON_2022, "model.name": path,
                               **strategy_sets(8, 8, 64, 3072, 1, 1, "full", False)})
    return {"total_s": r["iteration_time_s"], "compute_s": r["compute_time_s"],
            "exposed_comm_s": r["exposed_comm_time_s"], "bubble_s": r["bubble_time_s"]}


def joint_fit_device(work):
    """The A100 with the other Table 4 fit: both parameters by joint least squares (GEMM 0.705, 1.71 TB/s; research
    notes of issue 16), for the sensitivity of Table 5 to the choice of fit."""
    with open(os.path.join(tscli.SOURCE_DIR, "inputs", "devices", "a100.json")) as f:
        d = json.load(f)
    d.update(name="a100-joint-fit", gemm_efficiency=0.705, memory_efficiency=1.71e12 / 2.039e12)
    path = os.path.join(work, "a100-joint-fit.json")
    with open(path, "w") as f:
        json.dump(d, f)
    return path


def run(work):
    """Everything the report's section needs."""
    return {"nccl": nccl(), "table4": table4_layers(work), "table5": table5(work),
            "table5_joint": table5(work, joint_fit_device(work)), "sc21": sc21(work),
            "sc21_2022": sc21(work, software=MEGATRON_2022), "sc21_t2": sc21_table2(work),
            "dp8": korthikanti_dp8(work), "memory": memory_feasibility(work), "calculon": calculon_case(work),
            "h100": h100_exploratory(work)}
