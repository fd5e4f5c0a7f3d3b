"""Measured MoE pre-training runs against `toposweep simulate` (issue 33 part 5; held out: nothing was fitted on
them). Each run: the configuration as published, what had to be chosen, toposweep's tokens/s per GPU, the
published one, the error, and where the predicted iteration goes (compute / exposed communication / bubble).

  python3 scripts/validation/exp_moe.py [--json | --markdown]

Sources (measured throughput with its configuration):
  * NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md (commit 0a25f911b2ed6c6905a539504fdb8e5b40e3438b),
    "25.09 NeMo Container", System DGX-H100: DeepSeekV3 (dropless), 1,024 GPUs, GBS 8192, MBS 1, sequence 4096,
    FSDP 0, TP 2, PP 8, CP 1, VP 4, EP 64, GA 128: 1,297 tokens/s/GPU (338 model TFLOP/s/GPU). Precision is not in
    the row; the page's note says the parenthesised numbers are FP8 with other scaling granularities, so the run is
    FP8 (Transformer Engine). "In token-dropless MoE training benchmarks, we force-balance the token distribution
    among experts" (the page's note): the experts are evenly loaded, as toposweep assumes.
  * NVIDIA-NeMo/Automodel docs/performance-summary.md (commit 01926a5c443b7979463c73341bf64adf79de638e, "Last
    Updated 2025-10-02"), "Pre-Training Performance", "System: DGX-H100, Precision: BF16", "Fake balanced gate":
    DeepSeek V3 671B, 1,024 GPUs, GBS 8192, MBS 1, sequence 4096, TP 1, PP 4, CP 1,
    EP 64, VP 8, FSDP 256, TE + DeepEP: 865 tokens/s/GPU; and 256 GPUs, GBS 512, PP 4, EP 64, VP 8, FSDP 64:
    1,002 tokens/s/GPU. FSDP shards parameters, gradients and optimizer state: strategy.zero = 3. AutoModel's FSDP is
    PyTorch's FSDP2, which gathers each layer's weights on a stream of its own ahead of the layer (its implicit
    forward and explicit backward prefetch): strategy.param_gather_overlap = true. Whether its pipeline schedule keeps
    the gathered weights over the microbatches (reshard_after_forward) is not published: the weights are gathered
    again in every pass, as ZeRO-3 does.
  * DeepSeek-AI, "DeepSeek-V3 Technical Report" (arXiv:2412.19437), Sec. 1 and Table 1: 180K H800 GPU hours per
    trillion tokens on 2,048 H800 (= 1e12 / (180e3 x 3600) = 1,543 tokens/s/GPU); Sec. 3.2: PP 16, EP 64 over 8
    nodes, ZeRO-1 data parallelism, no TP, DualPipe; Sec. 3.3: FP8 GEMMs; Sec. 4.2: sequence 4096, batch 15,360
    sequences after the ramp-up; Sec. 3.1: 8 GPUs per node on NVLink, one 400 Gb/s InfiniBand NIC per GPU.

Clusters: DGX-H100 / the H800 cluster, 8 GPUs a server on NVLink, one 400 Gb/s InfiniBand NIC per GPU, modelled as
one non-blocking switch of 400 Gb/s ports (HDR/NDR InfiniBand efficiency 0.96, the other validations' value).

Expert-parallel All-to-All (issue 33): whether it overlaps compute (`strategy.ep_overlap`) and the datatype of its
dispatches (`model.moe_dispatch_datatype`), per run as published, else open (chosen like the recomputation):
  * DeepSeek-V3 report: overlapped (DualPipe pairs a forward and a backward chunk so that "both all-to-all and PP
    communication can be fully hidden", Sec. 3.2.1) and fp8 dispatch, bf16 combine (Sec. 3.3.2): both published.
  * NeMo AutoModel (BF16, DeepEP): dispatch bf16 (the table's precision); the overlap is not published: open.
  * Megatron-Bridge 25.09 (FP8): both published. The 25.09 performance recipe (NVIDIA-NeMo/Megatron-Bridge
    commit f37f883a8, 2025-09-24, "Malay/dsv3 2509": scripts/performance/run_script.py, deepseek v3 on h100)
    enables DeepEP with force-balanced routing and the 1F1B All-to-All overlap
    (`overlap_moe_expert_parallel_comm = True`, `delay_wgrad_compute = True`). The dispatch is bf16 by code:
    Megatron-Core's DeepEP path (megatron/core/transformer/moe/fused_a2a.py, NVIDIA/Megatron-LM 8333bd5bb6 of
    2025-06-16, unchanged until 2025-11-18) hands DeepEP the bf16 hidden states and has no fp8 dispatch.
  * The SMs the overlapped dispatch/combine kernels occupy (`strategy.ep_sms`): every row runs DeepEP (AutoModel
    "TE + DeepEP", Megatron-Bridge's flex dispatcher) or DeepSeek-V3's own kernels, on 20 SMs: DeepEP's default
    (Megatron-Core's moe_deepep_num_sms, "historical default 20") and the report's "only 20 SMs" (Sec. 3.2.2),
    toposweep's default.

Expert tensor parallelism and TP overlap (`strategy.etp`, `strategy.tp_overlap`), the one TP 2 run:
  * Megatron-Bridge 25.09: published. Its performance matrix sets `etp: 1` for h100 (configs/deepseek/
    deepseek_v3_llm_pretrain.yaml at f37f883a8; helpers.py sets expert_tensor_parallel_size from it): whole experts,
    EP 64 folded over TP 2 x DP 64 (Megatron-Core's parallel folding), each rank dispatching its own s / 2 tokens and
    no TP collective around the routed experts (the shared expert keeps its own). The recipe builds
    `CommOverlapConfig(tp_comm_overlap=False)` (src/megatron/bridge/recipes/deepseek/deepseek_v3.py), so only
    Transformer Engine's own backward overlap runs (the input re-gather under the input-gradient GEMM, the
    input-gradient ReduceScatter under the weight-gradient GEMM: async_op in transformer_engine/pytorch/module/
    linear.py): `strategy.tp_overlap = backward`. Before both, with the experts split over TP and the TP
    collectives overlapped in full (chosen), the row read 1498 tokens/s/GPU (+15.5 %). The same recipe's DDP
    config sets overlap_param_gather=True (deepseek_v3.py at f37f883a8): `strategy.param_gather_overlap = true`.

The dispatcher (`strategy.ep_dispatcher = deepep`: each token crosses the network once per destination node and is
forwarded over NVLink there, util/alltoall_dedup.hpp), every run, published: Megatron-Bridge 25.09's flex
dispatcher with DeepEP (above), NeMo AutoModel's "TE + DeepEP", and the DeepSeek-V3 report's own kernels ("tokens ...
transmitted via IB to the GPUs with the same in-node index on its target nodes ... then forwarded via NVLink",
Sec. 3.2.2). The built-in deepseek-v3 routes each token within 4 of its 8 expert groups, one group a server here
(node-limited routing, Sec. 2.1.2; its config.json n_group 8, topk_group 4; Megatron-Core's moe_router_num_groups /
moe_router_group_topk, which the Megatron-Bridge and AutoModel runs take from the same config): 0.454 of NCCL's
inter-node bytes instead of 0.662 without the limit.

The loss (`model.cross_entropy`): Megatron-Bridge 25.09 publishes Transformer Engine's fused cross entropy
(deepseek_v3_llm_pretrain.yaml at f37f883a8: `cross_entropy_fusion_impl: "te"`; DeepSeekModelProvider:
cross_entropy_loss_fusion = True): `te`. The other runs do not say: Megatron-Core's default, unfused.

Pipeline stage split (`strategy.stage_split`), per run:
  * Megatron-Bridge 25.09: published. Its recipe's layout `Et|(tt|)*30mL` (configs/deepseek/
    deepseek_v3_llm_pretrain.yaml at f37f883a8: the embedding and one layer, 30 x two layers, the MTP module and
    the loss, over PP 8 x VP 4 = 32 virtual stages) is the even split with the embedding and the loss counted as
    layers: `ends`.
  * DeepSeek-V3 report (DualPipe) and NeMo AutoModel: not published; open over even and ends.

FP8 scaling recipe (`model.fp8_recipe`, which sets the bytes of quantizing the fp8 GEMMs' operands), per run:
  * Megatron-Bridge 25.09: per-tensor current scaling (`tensorwise`): the recipe's H100 matrix runs bf16, fp8_cs
    and fp8_ss (configs/deepseek/deepseek_v3_llm_pretrain.yaml at f37f883a8); the table's parenthesised 330
    TFLOP/s is the subchannel (blockwise) one, so the 338 (1,297 tokens/s/GPU) is fp8_cs.
  * DeepSeek-V3 report: 1 x 128 activation tiles and 128 x 128 weight blocks (Sec. 3.3.1-3.3.2: `blockwise`);
    its output head stays out of fp8 (Sec. 3.3), as toposweep runs it.
The rows also report the prediction with the All-to-All exposed and in bf16 (Megatron-Core's defaults), to show
what the two knobs move.

Activation recomputation and the memory savers (`strategy.recompute_modules`, `model.optimizer_moments`,
`model.moe_activation_datatype`), per run as published, else open:
  * DeepSeek-V3 report: published. Recomputation of RMSNorm and the MLA up-projections in the backward pass
    (Sec. 3.2.3) and the SwiGLU's output recomputed from its cached input in the MoE (Sec. 3.3.2):
    `strategy.recompute = selective` with `strategy.recompute_modules = layernorm,mla_up_proj,moe_act` (the
    closest Megatron-Core set; core attention is not recomputed, which with flash attention keeps nothing extra
    anyway); AdamW's first and second moments in BF16 (Sec. 3.3.2 "Low-Precision Optimizer States"):
    `model.optimizer_moments = bf16`; the MoE's cached activations in FP8 (Sec. 3.3.2 "Low-Precision Storage"):
    `model.moe_activation_datatype = fp8`. Not modelled: the rest of its FP8 caching (the attention output
    projection's input, beyond the fp8 GEMM inputs every fp8 run keeps) and the EMA kept in CPU memory (not on the
    GPU in either case).
  * Megatron-Bridge 25.09: published in the same recipe: `recompute_granularity: selective`
    (configs/deepseek/deepseek_v3_llm_pretrain.yaml) with `recompute_modules = ["mla_up_proj", "mlp"]` on h100
    (run_script.py). Megatron-Core's `mlp` module recomputes dense MLPs only (transformer_layer.py: `if not
    isinstance(self.mlp, MoELayer)`), so in DeepSeek-V3 it covers the 3 dense layers. The same yaml reduces the
    gradients in bf16 (`grad_reduce_in_fp32: false`: model.grad_datatype = bf16) and turns the overlapped
    gradient reduction off (`overlap_grad_reduce: false`: strategy.dp_overlap = false). fp32 optimizer moments and
    bf16 MoE activations (Megatron-Core's defaults; the precision-aware optimizer is set for bf16 runs only).
  * Every run: `model.moe_probs_in_activation = true`, the router probabilities multiplied in the experts'
    activation so that the unpermutation keeps k probabilities per token instead of its k expert outputs
    (Megatron-Core v0.13 release notes, "Memory efficient token permutation by moving the probs multiplication from
    unpermutation to activation function of GroupedMLP"). Megatron-Bridge 25.09 (September 2025) runs a Megatron-Core
    after v0.13 (July 2025): published by code. The other runs do not say: open, and since it changes memory
    only, the fastest feasible choice is it.
  * NeMo AutoModel: not published. Open, the fastest feasible of none, selective with NVIDIA's DeepSeek-V3 recipe's
    modules (mla_up_proj, mlp: the Megatron-Bridge recipe above, not known to be AutoModel's) and full; fp32
    optimizer moments and bf16 MoE activations (Megatron-Core's defaults).

Chosen (not published), each the same for every run but where a run publishes it: bf16 gradients reduced in
fp32 and reduced during the backward (Megatron-Bridge: published otherwise, above), fused attention (the
device's default), sequence parallelism with TP overlap where tp > 1 (Megatron-Bridge 25.09: published, below),
the All-to-All algorithm toposweep picks
(`collective.algorithm = auto`), and over the knobs a run leaves open the fastest feasible choice toposweep finds:
activation recomputation as above, the schedule where VP is not published (DualPipe is not modelled: 1F1B or
interleaved). toposweep's deepseek-v3 carries its multi-token-prediction module as one more layer.
"""
import itertools
import json
import os
import sys
import tempfile

import tscli

CLUSTER = {"topology.kind": "switch", "topology.degree": 8, "topology.link_bandwidth": "400Gbps",
           "topology.link_efficiency": 0.96, "topology.link_latency": "4.8us", "server.gpus": 8,
           "model.grad_datatype": "fp32", "simulate.network_model": "analytical", "model.fused_attention": "true",
           "strategy.microbatch_size": 1}

# name, source, model, device, datatype, GPUs, GBS, seq, tp, pp, vp (None: open), ep, zero, measured tokens/s/GPU
RUNS = [
    ("megatron-bridge-25.09-dsv3-1024", "Megatron-Bridge 25.09, DGX-H100", "deepseek-v3", "h100", "fp8", 1024, 8192,
     4096, 2, 8, 4, 64, 1, 1297),
    ("automodel-dsv3-1024", "NeMo AutoModel, DGX-H100 BF16", "deepseek-v3", "h100", "bf16", 1024, 8192, 4096, 1, 4,
     8, 64, 3, 865),
    ("automodel-dsv3-256", "NeMo AutoModel, DGX-H100 BF16", "deepseek-v3", "h100", "bf16", 256, 512, 4096, 1, 4, 8,
     64, 3, 1002),
    ("deepseek-v3-report-2048", "DeepSeek-V3 report, H800", "deepseek-v3", "h800", "fp8", 2048, 15360, 4096, 1, 16,
     None, 64, 1, 1e12 / (180e3 * 3600)),
]
# Per run: the EP overlaps and dispatch datatypes allowed (one value: published; several: open).
EP_CHOICES = {
    "megatron-bridge-25.09-dsv3-1024": ((True,), ("bf16",)),
    "automodel-dsv3-1024": ((False, True), ("bf16",)),
    "automodel-dsv3-256": ((False, True), ("bf16",)),
    "deepseek-v3-report-2048": ((True,), ("fp8",)),
}
# Per run: the recomputations allowed, (strategy.recompute, strategy.recompute_modules or None), and the model keys
# set (published memory savers). One recomputation: published; several: open.
NVIDIA_RECOMPUTE = (("none", None), ("selective", "mla_up_proj,mlp"), ("full", None))
RECOMPUTE = {
    "megatron-bridge-25.09-dsv3-1024": (("selective", "mla_up_proj,mlp"),),
    "automodel-dsv3-1024": NVIDIA_RECOMPUTE,
    "automodel-dsv3-256": NVIDIA_RECOMPUTE,
    "deepseek-v3-report-2048": (("selective", "layernorm,mla_up_proj,moe_act"),),
}
# Recomputations also timed (for the text, never chosen): the published one's alternatives.
RECOMPUTE_TIMED = {"megatron-bridge-25.09-dsv3-1024": NVIDIA_RECOMPUTE}
RUN_KEYS = {
    # Megatron-Bridge 25.09's recipe (configs/deepseek/deepseek_v3_llm_pretrain.yaml at f37f883a8)
    "megatron-bridge-25.09-dsv3-1024": {"model.grad_datatype": "bf16", "strategy.dp_overlap": "false",
                                        "model.fp8_recipe": "tensorwise", "strategy.stage_split": "ends",
                                        "strategy.etp": 1, "strategy.tp_overlap": "backward",
                                        "strategy.param_gather_overlap": "true", "model.cross_entropy": "te",
                                        "strategy.ep_dispatcher": "deepep"},
    # NeMo AutoModel's FSDP2: every pass's gathers prefetched on the DP stream (the docstring)
    "automodel-dsv3-1024": {"strategy.param_gather_overlap": "true", "strategy.ep_dispatcher": "deepep"},
    "automodel-dsv3-256": {"strategy.param_gather_overlap": "true", "strategy.ep_dispatcher": "deepep"},
    "deepseek-v3-report-2048": {"model.optimizer_moments": "bf16", "model.moe_activation_datatype": "fp8",
                                "model.fp8_recipe": "blockwise", "strategy.ep_dispatcher": "deepep"},
}
# Every run: the router probabilities applied in the experts' activation (Megatron-Core >= v0.13), so the
# unpermutation keeps no expert outputs. Published by code for Megatron-Bridge 25.09 (Megatron-Core > v0.13); for the
# others not published and open: it changes memory only, so the fastest feasible choice over {false, true} is true.
ALL_RUN_KEYS = {"model.moe_probs_in_activation": "true"}
OPEN_VP = (1, 2, 4)
# The pipeline stage split where a run does not publish it (strategy.stage_split): even, or the ends counted.
OPEN_STAGE_SPLIT = ("even", "ends")
OVERLAP = (False, True)
DISPATCH = ("bf16", "fp8")


def without_reserve(device):
    """A copy of the device's file with its memory reserve at 0: a diagnosis for a run whose published choices need
    more memory than the model gives it, never a prediction (the H800's 6 GiB reserve is the A100's, not measured)."""
    with open(os.path.join(tscli.SOURCE_DIR, "inputs", "devices", f"{device}.json")) as f:
        spec = json.load(f)
    spec["memory_reserve"] = "0GiB"
    path = os.path.join(tempfile.mkdtemp(prefix="exp_moe_"), f"{device}_no_reserve.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def calls_of(run, device_file=None):
    _, _, model, device, dt, gpus, gbs, seq, tp, pp, vp, ep, zero, _ = run
    base = {**CLUSTER, "topology.servers": gpus // 8, "server.device": device_file or device, "model.name": model,
            "model.datatype": dt, "model.global_batch": gbs, "model.seq_len": seq, "strategy.tp": tp,
            "strategy.pp": pp, "strategy.ep": ep, "strategy.zero": zero, **ALL_RUN_KEYS}
    if tp > 1:  # chosen where a run does not publish it
        base.update({"strategy.sequence_parallel": "true", "strategy.tp_overlap": "full"})
    base.update(RUN_KEYS.get(run[0], {}))
    plan = list(itertools.product(RECOMPUTE_TIMED.get(run[0], RECOMPUTE[run[0]]), OPEN_VP if vp is None else (vp,),
                                  OVERLAP, DISPATCH, OPEN_STAGE_SPLIT))
    calls = []
    for (rc, modules), v, ov, disp, split in plan:
        sets = {**base, "strategy.recompute": rc, "strategy.virtual_stages": v,
                "strategy.schedule": "interleaved" if v > 1 else "1f1b",
                "strategy.ep_overlap": "true" if ov else "false", "model.moe_dispatch_datatype": disp,
                "strategy.stage_split": split}
        if modules:
            sets["strategy.recompute_modules"] = modules
        calls.append(("simulate", sets, [], []))
    return plan, calls


def best_of(r, device_file=None):
    """The fastest feasible choice of run r (its allowed EP overlaps and dispatches), the fastest with the All-to-All
    exposed and in bf16, why the others were refused, and per recomputation and per (overlap, dispatch) the fastest
    iteration time (feasible choices; the recomputation's over the run's allowed overlaps and dispatches)."""
    name = r[0]
    plan, calls = calls_of(r, device_file)
    overlaps, dispatches = EP_CHOICES[name]
    split_published = RUN_KEYS.get(name, {}).get("strategy.stage_split")
    best, exposed, reasons = None, None, set()
    by_recompute, by_a2a, by_split = {}, {}, {}
    for (rc, v, ov, disp, split), call, res in zip(plan, calls, tscli.run_many(calls)):
        if isinstance(res, Exception):
            reasons.add(str(res).split(": ")[-1][:120])
            continue
        if not res["feasible"]:
            reasons.add(res.get("infeasible_reason", ""))
            continue
        t = res["iteration_time_s"]
        if ov in overlaps and disp in dispatches and rc in RECOMPUTE[name]:
            by_split[split] = min(t, by_split.get(split, t))
        if split_published and split != split_published:
            continue
        if not ov and disp == "bf16" and (exposed is None or t < exposed):
            exposed = t
        by_a2a[(ov, disp)] = min(t, by_a2a.get((ov, disp), t))
        if ov not in overlaps or disp not in dispatches:
            continue
        label = rc[0] + (f" ({rc[1]})" if rc[1] else "")
        by_recompute[label] = min(t, by_recompute.get(label, t))
        if rc not in RECOMPUTE[name]:
            continue
        if best is None or t < best[0]:
            best = (t, rc, (v, split), res, ov, disp, call[1])
    return best, exposed, reasons, by_recompute, by_a2a, by_split


def run():
    rows = []
    for r in RUNS:
        name, source, model, device, dt, gpus, gbs, seq, tp, pp, vp, ep, zero, measured = r
        overlaps, dispatches = EP_CHOICES[name]
        best, exposed, reasons, by_recompute, by_a2a, by_split = best_of(r)
        row = {"name": name, "source": source, "model": model, "device": device, "datatype": dt, "gpus": gpus,
               "global_batch": gbs, "seq": seq, "tp": tp, "pp": pp, "ep": ep, "zero": zero,
               "dp": gpus // (tp * pp), "measured_tokens_per_gpu_s": measured,
               "recompute_published": len(RECOMPUTE[name]) == 1,
               "tokens_per_gpu_s_by_recompute": {k: gbs * seq / t / gpus for k, t in by_recompute.items()},
               "tokens_per_gpu_s_by_a2a": {f"{'overlapped' if ov else 'exposed'} {d}": gbs * seq / t / gpus
                                           for (ov, d), t in by_a2a.items()},
               "tokens_per_gpu_s_by_stage_split": {k: gbs * seq / t / gpus for k, t in by_split.items()}}
        if best is None:
            row["infeasible"] = sorted(reasons)
            # The published choices over the model's memory: what they would run at with the device's memory
            # reserve waived (a diagnosis, not a prediction; not in the error counts).
            waived = best_of(r, without_reserve(device))[0]
            if waived is not None:
                pred = gbs * seq / waived[0] / gpus
                row.update({"waived_reserve_tokens_per_gpu_s": pred,
                            "waived_reserve_error_pct": 100 * (pred - measured) / measured,
                            "waived_reserve_compute_s": waived[3]["compute_time_s"],
                            "waived_reserve_exposed_comm_s": waived[3]["exposed_comm_time_s"],
                            "waived_reserve_bubble_s": waived[3]["bubble_time_s"],
                            "waived_reserve_iteration_time_s": waived[0]})
        else:
            t, (rc, modules), (v, split), res, ov, disp, sets = best
            pred = gbs * seq / t / gpus
            # The chosen run with the expert outputs kept for the probabilities' gradient (as before
            # model.moe_probs_in_activation): its memory and whether it fits.
            kept = tscli.run("simulate", {**sets, "model.moe_probs_in_activation": "false"})
            row.update({"memory_GiB": res["memory_per_gpu_bytes"] / 2**30,
                        "memory_GiB_outputs_kept": kept["memory_per_gpu_bytes"] / 2**30,
                        "feasible_outputs_kept": kept["feasible"]})
            row.update({"recompute": rc + (f" ({modules})" if modules else ""), "virtual_stages": v,
                        "stage_split": split, "stage_split_published": "strategy.stage_split" in RUN_KEYS.get(name, {}),
                        "iteration_time_s": t, "ep_overlap": ov, "dispatch": disp,
                        "overlap_published": len(overlaps) == 1, "dispatch_published": len(dispatches) == 1,
                        "exposed_bf16_tokens_per_gpu_s": gbs * seq / exposed / gpus,
                        "predicted_tokens_per_gpu_s": pred, "error_pct": 100 * (pred - measured) / measured,
                        "compute_s": res["compute_time_s"], "exposed_comm_s": res["exposed_comm_time_s"],
                        "bubble_s": res["bubble_time_s"]})
        rows.append(row)
    return rows


def table(rows):
    out = ["| run | GPUs | dtype | TP/PP/VP/EP, zero, stage split | recompute | EP overlap, dispatch | predicted tok/s/GPU "
           "| measured | error | compute / exposed comm / bubble (s) | exposed bf16 All-to-All: tok/s/GPU, error |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cfg = f"{r['tp']}/{r['pp']}/{r.get('virtual_stages', '-')}/{r['ep']}, {r['zero']}"
        if "stage_split" in r:
            cfg += f", {r['stage_split']}" + ("" if r["stage_split_published"] else " (chosen)")
        if "infeasible" in r:
            rc = "-"
            if r["recompute_published"]:
                c, mods = RECOMPUTE[r["name"]][0]
                rc = c + (f" ({mods})" if mods else "")
            pred, err, split = f"infeasible: {'; '.join(r['infeasible'])}", "-", "-"
            if "waived_reserve_tokens_per_gpu_s" in r:
                pred += (f" (with the device's memory reserve waived: "
                         f"{r['waived_reserve_tokens_per_gpu_s']:.0f})")
                err = f"({r['waived_reserve_error_pct']:+.1f} %)"
                split = (f"({r['waived_reserve_compute_s']:.2f} / {r['waived_reserve_exposed_comm_s']:.2f} / "
                         f"{r['waived_reserve_bubble_s']:.2f})")
            out.append(f"| {r['source']} | {r['gpus']} {r['device']} | {r['datatype']} | {cfg} | {rc} | - | {pred} | "
                       f"{r['measured_tokens_per_gpu_s']:.0f} | {err} | {split} | - |")
            continue
        ov = ("on" if r["ep_overlap"] else "off") + ("" if r["overlap_published"] else " (chosen)")
        rc = r["recompute"] + ("" if r["recompute_published"] else " (chosen)")
        disp = r["dispatch"] + ("" if r["dispatch_published"] else " (chosen)")
        exp = r["exposed_bf16_tokens_per_gpu_s"]
        out.append(f"| {r['source']} | {r['gpus']} {r['device']} | {r['datatype']} | {cfg} | {rc} | "
                   f"{ov}, {disp} | {r['predicted_tokens_per_gpu_s']:.0f} | {r['measured_tokens_per_gpu_s']:.0f} | "
                   f"{r['error_pct']:+.1f} % | {r['compute_s']:.2f} / {r['exposed_comm_s']:.2f} / "
                   f"{r['bubble_s']:.2f} | {exp:.0f}, "
                   f"{100 * (exp / r['measured_tokens_per_gpu_s'] - 1):+.1f} % |")
    return "\n".join(out)


def hidden_a2a_tokens(r):
    """Tokens/s per GPU if the predicted iteration were only its compute and bubble (the exposed communication,
    mostly the EP All-to-All, hidden as the runs' overlap hides it): a diagnosis, not a prediction."""
    return r["global_batch"] * r["seq"] / (r["compute_s"] + r["bubble_s"]) / r["gpus"]


def grouped_gemm_lines(fit):
    """The expert-FFN fit of fit_hopper.py (grouped_gemm_efficiency), one row per measured `moe` shape."""
    out = ["| GPU | shape (experts x tokens, h, f) | forward ms | error at gemm_efficiency | error at "
           "grouped_gemm_efficiency | backward ms | error at gemm_efficiency | error at grouped_gemm_efficiency |",
           "|---|---|---|---|---|---|---|---|"]
    for gpu in ("h100", "h200"):
        f = fit[gpu]
        hf = {"mixtral-8x7b": "4096, 14336", "deepseek-v3": "7168, 2048"}
        for x in f["grouped_gemm_rows_detail"]:
            out.append(f"| {gpu} ({f['gemm_efficiency']} -> {f['grouped_gemm_efficiency']}) | {x['model']} "
                       f"{x['experts']} x {x['tokens_per_expert']}, {hf[x['model']]} | {x['fwd_ms']:.3f} | "
                       f"{x['fwd_err_pct_at_gemm_efficiency']:+.1f} % | {x['fwd_err_pct']:+.1f} % | {x['bwd_ms']:.3f} | "
                       f"{x['bwd_err_pct_at_gemm_efficiency']:+.1f} % | {x['bwd_err_pct']:+.1f} % |")
    return out


def ds_text(ds, modules, need):
    """The DeepSeek-V3 report row's bullet in 7d: its published memory savers, and what the model needs with them."""
    head = (f"- DeepSeek-V3 report: with its published choices (RMSNorm, MLA up-projections and the MoE SwiGLU "
            f"recomputed, Sec. 3.2.3 and 3.3.2: `selective` with `{modules}`; AdamW moments in bf16; the MoE's cached "
            "activations in fp8)")
    tail = " DualPipe (not modelled) holds PP + 1 microbatches' activations where 1F1B holds PP (report Table 2)."
    if "infeasible" in ds:
        return (head + f" the model needs {need} on its worst stage, over the H800's 80 GiB: the row is infeasible "
                "in the model. With the device's memory reserve (the A100's 6 GiB, not measured) waived it would run "
                f"at {ds['waived_reserve_tokens_per_gpu_s']:.0f} tokens/s/GPU ({ds['waived_reserve_error_pct']:+.1f} "
                "%): a diagnosis, not counted above." + tail)
    return (head + " and the router probabilities applied in the experts' activation (not published; Megatron-Core "
            "does so since v0.13), the model needs "
            f"{ds['memory_GiB']:.1f} GiB per GPU and runs at {ds['predicted_tokens_per_gpu_s']:.0f} tokens/s/GPU "
            f"({ds['error_pct']:+.1f} %; {ds['compute_s']:.1f} s compute, {ds['exposed_comm_s']:.1f} s exposed "
            f"communication, {ds['bubble_s']:.1f} s bubble per {ds['iteration_time_s']:.1f} s against the measured "
            f"{ds['global_batch'] * ds['seq'] / ds['measured_tokens_per_gpu_s'] / ds['gpus']:.1f} s). Keeping the "
            "expert outputs for the probabilities' gradient instead (k s h elements in bf16 per MoE layer and "
            f"microbatch) needs {ds['memory_GiB_outputs_kept']:.1f} GiB, which "
            + ("fits" if ds["feasible_outputs_kept"] else "does not fit the H800's 80 GiB") + "." + tail)


def markdown(rows, fit, notes):
    """docs/validation.md section 7d (scripts/validation/report.py)."""
    ok = [r for r in rows if "error_pct" in r]
    worst = max(ok, key=lambda r: abs(r["error_pct"]))
    err = [abs(r["error_pct"]) for r in ok]
    lines = ["", "## 7d. Mixture-of-Experts: grouped expert GEMMs and measured DeepSeek-V3 runs (held out)",
             "Driver: `scripts/validation/exp_moe.py` (sources, configurations and choices in its docstring); the "
             "expert GEMM efficiency: `scripts/validation/fit_hopper.py`.", "",
             "**Grouped expert GEMMs (calibration).** The measured expert FFNs of "
             "`docs/validation/reference/hopper/` (`moe`: batched bf16 GEMMs, SwiGLU, forward = up+gate GEMM, "
             "SiLU x up, down GEMM; backward = dgrad + wgrad of both and the activation's backward) against the "
             "model's expert_in / expert_activation / expert_out on one rank, with the `gemm` fit's per-call timing "
             "overhead. At the dense `gemm_efficiency` the expert FFNs are predicted too fast; the fitted "
             "`grouped_gemm_efficiency` (one number per device, least squares of the times) is what the MoE "
             "layer's expert GEMMs now run at:", ""]
    lines += grouped_gemm_lines(fit)
    for gpu in ("h100", "h200"):
        f = fit[gpu]
        lines.append(f"- {gpu}: mean |error| {f['grouped_gemm_mean_abs_error_pct_at_gemm_efficiency']} % -> "
                     f"{f['grouped_gemm_mean_abs_error_pct']} %, max "
                     f"{f['grouped_gemm_max_abs_error_pct_at_gemm_efficiency']} % -> "
                     f"{f['grouped_gemm_max_abs_error_pct']} %.")
    lines.append("- The worst rows left are measured slower than the model: the smallest shape (8 x 512 tokens: few "
                 "tokens per expert, which one efficiency cannot follow) and the H200's 8 x 4096 DeepSeek-V3 "
                 "forward (9.7 %; the H100 ran the same shape 10 % faster).")
    within = [r for r in ok if abs(r["error_pct"]) <= 15]
    mb = next(r for r in ok if r["name"].startswith("megatron-bridge"))
    mb_a2a, mb_rc = mb["tokens_per_gpu_s_by_a2a"], mb["tokens_per_gpu_s_by_recompute"]
    ds = next(r for r in rows if r["name"] == "deepseek-v3-report-2048")
    ds_modules = RECOMPUTE[ds["name"]][0][1]
    ds_need = next((x.split(" per GPU")[0].replace("needs ", "") for x in ds.get("infeasible", []) if "GiB" in x),
                   "-")

    def pct(tokens, r):
        return 100 * (tokens / r["measured_tokens_per_gpu_s"] - 1)

    exposed = sorted(pct(r["exposed_bf16_tokens_per_gpu_s"], r) for r in ok)
    slow = f"{exposed[0]:+.0f} … {exposed[-1]:+.0f}"
    lines += ["", "**Measured MoE pre-training runs (held out).** Published tokens/s per GPU with the published "
              "layout; toposweep picks, over what a run leaves open (recomputation, the schedule where VP is not "
              "published, the EP All-to-All's overlap and dispatch datatype and the pipeline stage split where they "
              "are not published: marked chosen), the fastest feasible choice. Clusters: 8 GPUs a server, one 400 Gb/s InfiniBand NIC per "
              "GPU, one non-blocking switch. The NeMo runs force-balance the routing, as the model assumes; "
              "DeepSeek-V3 balances it with its auxiliary-loss-free bias (close to, not exactly, even). The last "
              "column is the prediction with the All-to-All exposed and in bf16 (Megatron-Core's defaults: what "
              "this section reported before `strategy.ep_overlap` and `model.moe_dispatch_datatype`).", "",
              table(rows), "",
              f"{len(within)} of {len(ok)} rows within 15 % (goal: every row; errors "
              + ", ".join(f"{r['error_pct']:+.1f} %" for r in ok) + "). Worst row: "
              f"{worst['source']}, {worst['gpus']} {worst['device']}, {worst['error_pct']:+.1f} % "
              f"({worst['compute_s']:.1f} s compute, {worst['exposed_comm_s']:.1f} s exposed communication, "
              f"{worst['bubble_s']:.1f} s bubble per {worst['iteration_time_s']:.1f} s iteration).",
              f"- The expert-parallel All-to-All decides these runs: exposed and in bf16 the rows read {slow} % "
              "(negative: too slow). The runs hide it under other microbatches' compute (DeepSeek-V3's DualPipe, report Sec. "
              "3.2.1; Megatron-Core's `--overlap-moe-expert-parallel-comm`), which `strategy.ep_overlap` models "
              "(a pass takes max(compute, All-to-All)) in the passes the schedule pairs, and DeepSeek-V3 "
              "dispatches in fp8 (Sec. 3.3.2, "
              "`model.moe_dispatch_datatype = fp8`). Both are published for the DeepSeek-V3 row and the "
              "Megatron-Bridge row (its 25.09 recipe overlaps; Megatron-Core's DeepEP path dispatches bf16); the "
              "AutoModel rows' overlap is chosen, which biases them fast. The Megatron-Bridge row with an fp8 "
              f"dispatch would read {mb_a2a['overlapped fp8']:.0f} tokens/s/GPU "
              f"({pct(mb_a2a['overlapped fp8'], mb):+.1f} %; not in the table).",
              "- **Only the paired passes overlap** (docs/models.md, \"Overlap\"): Megatron-Core merges a forward "
              "with a backward in the steady state of its pipeline schedules only (`combined_1f1b.py`: \"Only "
              "exists in 1f1b steady state\"), so the warm-up forwards and cool-down backwards keep their "
              "All-to-Alls exposed. Before this every pass overlapped and the rows read +19.5 %, +18.9 %, +9.7 % "
              "and +7.8 %. The AutoModel rows run their own pipeline schedule, not published, and the DeepSeek-V3 "
              "row DualPipe, whose warm-up overlaps more (report Fig. 5); both stand in with Megatron-Core's "
              "pairing here. The 256-GPU AutoModel run has 8 microbatches per pipeline over PP 4 x VP 8, so 34 "
              "of each device's 64 forward chunks are warm-up: most of its All-to-Alls are exposed in the model.",
              "- **Expert tensor parallelism** (`strategy.etp`, docs/models.md \"Expert tensor parallelism\"): the "
              "Megatron-Bridge recipe runs whole experts (`etp: 1`) with EP 64 folded over TP 2 x DP 64, and no "
              "userbuffers TP overlap (`tp_comm_overlap = False`: Transformer Engine's backward-only overlap); its "
              "weights are gathered under the next forward (`overlap_param_gather`: `strategy.param_gather_overlap`). "
              "With the experts split over TP and the TP overlap chosen full, as before `strategy.etp`, the row "
              "read 1498 tokens/s/GPU (+15.5 %): the folded experts drop the TP collectives around the routed "
              "experts and run larger GEMMs, which makes the model faster still.",
              "- Recomputation by module (`strategy.recompute_modules`, Megatron-Core's `--recompute-modules`), "
              "bf16 optimizer moments (`model.optimizer_moments`) and fp8 MoE activations "
              "(`model.moe_activation_datatype`). Before them only full recomputation fitted 80 GiB in the model, "
              "and every row paid a full recomputed forward and re-ran each MoE layer's dispatch and combine "
              "(the DeepSeek-V3 row read 1196 tokens/s/GPU, -22.5 %, the Megatron-Bridge row 1333, +2.8 %).",
              ds_text(ds, ds_modules, ds_need),
              f"- Megatron-Bridge 25.09, run as its recipe publishes it (NVIDIA-NeMo/Megatron-Bridge f37f883a8: "
              f"selective recomputation of `mla_up_proj,mlp`, which Megatron-Core applies to the 3 dense layers' "
              f"MLPs only; the 1F1B All-to-All overlap; gradients reduced in bf16 after the backward and the weights "
              f"gathered under the next forward; expert tensor parallelism 1 and Transformer Engine's backward-only TP "
              f"overlap): "
              f"{mb['predicted_tokens_per_gpu_s']:.0f} tokens/s/GPU, {mb['error_pct']:+.1f} %. With full "
              f"recomputation the same run would read {mb_rc.get('full', float('nan')):.0f} "
              f"({pct(mb_rc.get('full', float('nan')), mb):+.1f} %). Its pipeline layout `Et|(tt|)*30mL` (the "
              "embedding and one layer in the first of 32 virtual stages, two layers in each of the next 30, the "
              "multi-token-prediction module and the loss in the last) is the even split with the embedding and "
              "the loss counted as layers: `strategy.stage_split = ends`, published. Left out of the model: its "
              "expert GEMMs run at the fp8 fraction fitted on large dense fp8 GEMMs scaled by the bf16 grouped / "
              "dense ratio (no fp8 grouped GEMM was measured).",
              "- **FP8 quantization and the bf16 output layer** (`model.fp8_recipe`, docs/models.md \"FP8 "
              "training\"): Transformer Engine quantizes each fp8 GEMM's input and output gradient (per-tensor "
              "current scaling: an amax pass, then a cast writing the row-wise and transposed copies: 6 bytes per "
              "element; blockwise 4 plus tile scales), and the output layer and the router are not Transformer "
              "Engine modules, so their GEMMs stay bf16. Before both, and before the stage split below (and with "
              "the Megatron-Bridge dispatch open, fp8 chosen), the Megatron-Bridge row read 1771 tokens/s/GPU "
              "(+36.5 %) and the DeepSeek-V3 row 1462 (-5.2 %).",
              "- **Stage split** (`strategy.stage_split = ends`: Megatron-Core's account_for_embedding_in_pipeline_"
              "split and account_for_loss_in_pipeline_split). With an even split of DeepSeek-V3's 62 blocks (the "
              "multi-token-prediction module counted as one) the last stage holds four MoE blocks plus the main "
              "and the MTP output heads in bf16 and is the critical one; counting the embedding and the loss as "
              "blocks moves one block off it. With the even split the rows would read "
              + ", ".join(f"{r['source'].split(',')[0]} ({r['gpus']} GPUs) "
                          f"{pct(r['tokens_per_gpu_s_by_stage_split']['even'], r):+.1f} %"
                          for r in ok if "even" in r["tokens_per_gpu_s_by_stage_split"])
              + ". DualPipe's own split is not published (the DeepSeek-V3 row's split is chosen); DeepSeek-V3's "
              "61 layers, its MTP module and the two ends make 64 = 16 x 4 slots, which suggests the ends split. "
              "With the stages balanced so the rows read "
              + ", ".join(f"{r['error_pct']:+.1f} %" for r in ok) + " (+28.2, +29.9, +16.5 and +17.6 % before "
              "the All-to-All kernels' SMs, the pairing and the Megatron-Bridge row's folding); candidates for what the Megatron-Bridge row "
              "still lacks, none measured: MLA's 192-wide query-key heads in the fused attention fitted on "
              "128-wide ones, DeepEP's dispatch preprocessing and the permutation kernels, the fp8 grouped GEMMs "
              "(not measured).",
              "- **The dispatcher** (`strategy.ep_dispatcher = deepep`, docs/models.md \"Dispatcher\"): every row runs DeepEP "
              "or DeepSeek's own kernels, which send a token over the network once per destination node: for 256 experts, "
              "top 8, over 8 nodes 0.662 of NCCL's inter-node bytes, and 0.454 with DeepSeek-V3's node-limited "
              "routing (4 of 8 groups, a group a server), which the built-in deepseek-v3 carries. With NCCL's "
              "All-to-All instead, as before the key, the rows read +23.4 %, +1.6 %, -16.6 % and +2.0 % (2 of 4 "
              "within 15 %).",
              "- **The All-to-All kernels' SMs** (`strategy.ep_sms`, default 20: DeepEP's default number of SMs, "
              "and the 20 of 132 SMs DeepSeek-V3 gives its communication, report Sec. 3.2.2): the overlapped "
              "dispatch and combine run on SMs the pass's compute loses while they run (docs/models.md, \"The "
              "All-to-Alls' SMs\"). Every row runs DeepEP (AutoModel: \"TE + DeepEP\"; Megatron-Bridge 25.09's "
              "flex dispatcher; DeepSeek-V3's own kernels), so every row takes the 20. Before it the rows read "
              "+28.2 %, +29.9 %, +16.5 % and +17.6 % (0 of 4 within 15 %): a pass whose compute outlasts its "
              "All-to-Alls now takes C + (20/132) A instead of C.",
              "- NeMo AutoModel: selective with `mla_up_proj,mlp` does not fit even with the router probabilities "
              "in the activation (PP 4 with VP 8 holds many layers' activations in flight), so full recomputation "
              "stays the only feasible choice.",
              "- The AutoModel rows read "
              + ", ".join(f"{r['error_pct']:+.0f} %" for r in ok if r["name"].startswith("automodel"))
              + ". Their FSDP (ZeRO-3) gathers are prefetched on the DP stream ahead of each pass's layers "
              "(`strategy.param_gather_overlap`, FSDP2's prefetch, docs/models.md); with them on the compute stream "
              "before each pass, as before this option, the rows read +9.6 % and -17.1 %. The prefetch gains the "
              "256-GPU run 0.7 % and costs the 1,024-GPU run (32 microbatches a pipeline) 7 %: every backward pass "
              "reduce-scatters its gradients (ZeRO-3), and each pass's gathers now queue behind the reduce-scatters "
              "of the backward before it on the DP communicator, where on the compute stream they ran beside them. "
              "What "
              "AutoModel's own pipeline schedule "
              "overlaps, its pipeline split (chosen here as the faster of even and ends) and DeepEP's achieved "
              "bandwidth are not published (with the overlap off they read "
              + " and ".join(f"{pct(r['exposed_bf16_tokens_per_gpu_s'], r):+.0f} %"
                             for r in ok if r["name"].startswith("automodel")) + ").",
              "- The grouped GEMM calibration above moves the three H100 rows by 0.5-0.7 % (measured once, at "
              "commit time, with a copy of inputs/devices/h100.json without grouped_gemm_efficiency).",
              "- No Mixtral row: Megatron-Core's MoE README gives 468 TFLOP/s per GPU for Mixtral 8x7B in bf16 "
              "(MCore v0.9) without the layout, GPU count or batch it ran; the Parallel Folding paper "
              "(arXiv:2504.14960) reports 49.3 % MFU for Mixtral 8x22B on H100 with its configurations in a table "
              "not read here. Megatron-Bridge's H100 FP8 rows for the built-in Qwen3-30B-A3B and Qwen3-235B-A22B, "
              "matched to the recipes of the container that measured them, are section 7d2's, with the same "
              "container's GPT-OSS 120B row (BF16, 64 GPUs, PP 4, EP 8).",
              "- Not modelled: DualPipe's schedule (1F1B / interleaved here); the multi-token-prediction module's "
              "exact cost (one more layer here); what DeepEP's kernels reach of the NICs' rate."]
    notes.append(f"MoE, 4 measured DeepSeek-V3 runs (1,024 H100 Megatron-Bridge / NeMo AutoModel, 256 H100, "
                 f"2,048 H800 DeepSeek-V3 report): {len(within)} of {len(ok)} within 15 % ("
                 + ", ".join(f"{r['error_pct']:+.1f} %" for r in ok) + ") with the EP All-to-All overlapped and "
                 "fp8 dispatch where published or chosen"
                 + (f"; the DeepSeek-V3 report's published recomputation and memory savers need {ds_need} of the "
                    "H800's 80 GiB in the model (infeasible"
                    if "infeasible" in ds else
                    f"; the DeepSeek-V3 report's published recomputation and memory savers with the router "
                    f"probabilities in the experts' activation need {ds['memory_GiB']:.1f} GiB of the H800's 80 "
                    f"({ds['memory_GiB_outputs_kept']:.1f} with the expert outputs kept")
                 + f"); exposed bf16 All-to-All: {slow} %. Grouped expert "
                 f"GEMMs: H100 {fit['h100']['grouped_gemm_mean_abs_error_pct']} % mean error on the measured expert "
                 "FFNs after calibration.")
    return lines


if __name__ == "__main__":
    rows = run()
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
    elif "--markdown" in sys.argv:
        import fit_hopper
        print("\n".join(markdown(rows, fit_hopper.fit(), [])))
    else:
        print(table(rows))
