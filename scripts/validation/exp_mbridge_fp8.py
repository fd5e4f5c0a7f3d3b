"""Megatron-Bridge's published FP8 pre-training runs of Llama 3 on DGX-H100 against `toposweep simulate` (issue 32:
published H100 runs; held out: nothing was fitted on them).

  python3 scripts/validation/exp_mbridge_fp8.py [--json | --markdown]

Sources (measured throughput with its configuration), System DGX-H100, Precision FP8, two containers:
  * Megatron-Bridge docs/performance-summary-archive.md, "26.04.01 NeMo Container" (added by commit 21d102f5e,
    2026-05-27):
      LLAMA3_70B, 64 GPUs, GBS 256, MBS 1, sequence 8192, FSDP 0, TP 4, PP 8, CP 1, VP 5: 1,664 tokens/s/GPU;
      LLAMA3.1_405B, 1,024 GPUs, GBS 1536, MBS 1, sequence 8192, FSDP 0, TP 8, PP 8, CP 2, VP 8: 328 tokens/s/GPU.
  * Megatron-Bridge docs/performance-summary.md at commit 97ad8cc6f (2025-12-04, "Added 25.11 starter pack"),
    "25.11 NeMo Container", FP8-CS:
      LLAMA3_8B, 8 GPUs, GBS 128, MBS 1, sequence 8192, FSDP 1 ("use FSDP", its nomenclature), TP 1, PP 1, CP 1,
        GA 16: 14,451 tokens/s/GPU;
      LLAMA3_70B, 64 GPUs, GBS 128, MBS 1, FSDP 0, TP 4, PP 8, CP 1, VP 5: 1,602 tokens/s/GPU;
      LLAMA3.1_405B, 1,024 GPUs, GBS 512, MBS 1, FSDP 0, TP 8, PP 8, CP 2, VP 8: 292 tokens/s/GPU.
The recipes at those commits (scripts/performance/configs/llama/llama3_workload_base_configs.py,
llama31_workload_base_configs.py and llama3(1)_llm_pretrain.py; `*_H100_FP8_CS_V2` at 21d102f5e,
`*_H100_FP8_CS_BASE_CONFIG` at 97ad8cc6f; the flat recipes of src/megatron/bridge/perf_recipes/llama/h100/ at
067f987df repeat the 26.04.01 ones) give what the tables do not, the same in both containers:
  * FP8 with per-tensor current scaling (`fp8_cs`: bf16_with_fp8_current_scaling_mixed, first and last layers not
    kept in bf16, fp8 parameter gather): `model.datatype = fp8`, `model.fp8_recipe = tensorwise`;
  * gradients reduced in bf16 (grad_reduce_in_fp32 = False: `_benchmark_common` at 21d102f5e,
    set_llama3(1)_common_configs at 97ad8cc6f): `model.grad_datatype = bf16`;
  * the distributed optimizer (`strategy.zero = 1`) with its parameter gather overlapped (overlap_param_gather =
    True in the recipes; with dp, pp and vp > 1 overrides.py at 21d102f5e also sets overlap_param_gather_with_
    optimizer_step, which hides even the first chunk's gather under the step): `strategy.param_gather_overlap =
    true` (the gathers under the next forward, bucket by bucket; the first bucket's exposed);
  * TP > 1: sequence parallelism with Transformer Engine's userbuffers TP overlap (userbuffers_fp8_h100_*):
    `strategy.sequence_parallel = true`, `strategy.tp_overlap = full`;
  * the pipeline split: the 405B recipe counts the embedding and the loss as layers
    (recipes/llama/llama3.py llama31_405b_pretrain_config: account_for_embedding_in_pipeline_split and
    account_for_loss_in_pipeline_split = True: `strategy.stage_split = ends`); the 70B one sets neither (even);
  * the loss in Transformer Engine's fused cross entropy (GPTModelProvider: cross_entropy_loss_fusion = True; the
    performance overrides' _set_common_perf_overrides: cross_entropy_fusion_impl = "te", at both commits):
    `model.cross_entropy = te`;
  * no recomputation on 70B and 405B (none is set), fused attention (Transformer Engine's cuDNN kernels on Hopper),
    gradient-accumulation fusion, the interleaved schedule with the published VP, gradient buckets overlapped
    with the backward (Megatron-Core's DDP default) of max(40M, 1M x DP) elements (bf16: 80 MB at DP 2 and 8).
  * Llama 3 8B (97ad8cc6f, LLAMA3_8B_PRETRAIN_CONFIG_H100_FP8_CS_BASE_CONFIG and llama3_8b_pretrain_config_h100):
    `recompute_num_layers = 5`, which overrides.py turns into recompute_granularity = full, recompute_method =
    block: the first 5 of the 32 blocks recomputed in full (`strategy.recompute = full`,
    `strategy.recompute_layers = 5`); Megatron-FSDP as the table says (its overrides: data_parallel_sharding_
    strategy = optim_grads_params, i.e. weights, gradients and optimizer state sharded over the 8 GPUs:
    `strategy.zero = 3`, the weights gathered ahead of each pass, `strategy.param_gather_overlap = true`), and with
    it gradient_accumulation_fusion = False (llama3_8b_pretrain_config_h100: `strategy.grad_accum_fusion =
    false`); TP 1, so no sequence parallelism and no TP overlap (tp_comm_overlap = TP > 1); 16 microbatches of
    one sequence, no pipeline.

Cluster: DGX-H100, 8 GPUs a server on NVLink, 8 x 400 Gb/s InfiniBand NICs per server (one per GPU), modelled as one
non-blocking switch (efficiency 0.96, the other validations' value).
"""
import json
import sys

import tscli
from exp_megatron import DGX_H100, h100_collective_sms, mcore_bucket

CLUSTER = {**DGX_H100, "model.fused_attention": "true",
           "model.datatype": "fp8", "model.fp8_recipe": "tensorwise", "model.grad_datatype": "bf16",
           "model.cross_entropy": "te",
           "strategy.microbatch_size": 1, "strategy.grad_accum_fusion": "true", "strategy.dp_overlap": "true",
           "strategy.p2p_overlap": "true", "strategy.zero": 1, "strategy.param_gather_overlap": "true",
           "strategy.sequence_parallel": "true",
           "strategy.tp_overlap": "full", "strategy.recompute": "none", "strategy.schedule": "interleaved"}

# The 8B recipe's differences from CLUSTER (docstring): Megatron-FSDP, block recomputation of 5 blocks, no TP.
LLAMA3_8B = {"strategy.zero": 3, "strategy.recompute": "full", "strategy.recompute_layers": 5,
             "strategy.grad_accum_fusion": "false", "strategy.sequence_parallel": "false",
             "strategy.tp_overlap": "none", "strategy.schedule": "1f1b"}

# name, container, model, GPUs, GBS, sequence, TP, PP, CP, VP, stage split, measured tokens/s/GPU, recipe settings
RUNS = [("Llama 3 70B", "26.04.01", "llama3-70b", 64, 256, 8192, 4, 8, 1, 5, "even", 1664, {}),
        ("Llama 3.1 405B", "26.04.01", "llama3-405b", 1024, 1536, 8192, 8, 8, 2, 8, "ends", 328, {}),
        ("Llama 3 8B", "25.11", "llama3-8b", 8, 128, 8192, 1, 1, 1, 1, "even", 14451, LLAMA3_8B),
        ("Llama 3 70B", "25.11", "llama3-70b", 64, 128, 8192, 4, 8, 1, 5, "even", 1602, {}),
        ("Llama 3.1 405B", "25.11", "llama3-405b", 1024, 512, 8192, 8, 8, 2, 8, "ends", 292, {})]
# The 8B row's recomputation alternatives, simulated beside it: none, and every block (sensitivities).
RECOMPUTE_ALTERNATIVES = {"none": {"strategy.recompute": "none", "strategy.recompute_layers": 0},
                          "all": {"strategy.recompute": "full", "strategy.recompute_layers": 0}}
# ... and the same run in bf16 (the model's fp8 gain on it).
ALTERNATIVES = {**RECOMPUTE_ALTERNATIVES, "bf16": {"model.datatype": "bf16"}}
# Every row with Megatron-Core's unfused cross entropy instead of the recipes' Transformer Engine one.
UNFUSED_LOSS = {"model.cross_entropy": "unfused"}


def call(run, **override):
    name, container, model, gpus, gbs, seq, tp, pp, cp, vp, split, measured, recipe = run
    dp = gpus // (tp * pp * cp)
    return ("simulate", {**CLUSTER, "topology.servers": max(1, gpus // 8), "model.name": model,
                         "model.seq_len": seq, "model.global_batch": gbs, "strategy.tp": tp, "strategy.pp": pp,
                         "strategy.cp": cp, "strategy.virtual_stages": vp, "strategy.stage_split": split,
                         **mcore_bucket(dp, grad_bytes=2), **recipe, **override}, [], [])


def run():
    calls = [call(r) for r in RUNS]
    extra = [(i, alt, call(r, **settings)) for i, r in enumerate(RUNS) if r[12].get("strategy.recompute_layers")
             for alt, settings in ALTERNATIVES.items()]
    extra += [(i, "unfused_loss", call(r, **UNFUSED_LOSS)) for i, r in enumerate(RUNS)]
    extra += [(i, "dp_sms", call(r, **{"strategy.dp_sms": h100_collective_sms()})) for i, r in enumerate(RUNS)]
    results = tscli.run_many(calls + [c for _, _, c in extra])
    rows = []
    for (name, container, model, gpus, gbs, seq, tp, pp, cp, vp, split, measured, recipe), res in zip(
            RUNS, results):
        row = {"run": name, "container": container, "model": model, "gpus": gpus, "global_batch": gbs, "seq": seq,
               "tp": tp, "pp": pp, "cp": cp, "vp": vp, "stage_split": split, "dp": gpus // (tp * pp * cp),
               "recompute_layers": recipe.get("strategy.recompute_layers", 0),
               "zero": recipe.get("strategy.zero", CLUSTER["strategy.zero"]), "measured_tokens_per_gpu_s": measured}
        rows.append(measured_row(row, res, {"tp_busy_s": "tensor_parallel"}))
    for (i, alt, _), res in zip(extra, results[len(calls):]):
        alternative(rows[i], res, alt if alt in ("bf16", "unfused_loss", "dp_sms") else f"recompute_{alt}")
    return rows


def add_alternatives(rows, extra, results):
    """Adds each `extra` run (row index, prefix, settings) to its row from its result (`alternative`)."""
    for (i, prefix, _), res in zip(extra, results):
        alternative(rows[i], res, prefix)


def main(run, markdown):
    """A driver's command line: its rows as JSON with --json, else its report section."""
    rows = run()
    print(json.dumps(rows, indent=1) if "--json" in sys.argv else "\n".join(markdown(rows, [])))


def alternative(row, res, prefix):
    """Adds to `row` (a measured_row) the same run with other settings, from its `simulate --json` result `res`:
    `prefix`_error_pct, _tokens_per_gpu_s, _iteration_time_s and _memory_GiB, or `prefix`_infeasible with why."""
    r = measured_row({k: row[k] for k in ("global_batch", "seq", "gpus", "measured_tokens_per_gpu_s")}, res, {})
    if "error_pct" not in r:
        row[f"{prefix}_infeasible"] = r["infeasible"]
        return
    row.update({f"{prefix}_error_pct": r["error_pct"], f"{prefix}_tokens_per_gpu_s": r["predicted_tokens_per_gpu_s"],
                f"{prefix}_iteration_time_s": r["iteration_time_s"], f"{prefix}_memory_GiB": r["memory_GiB"]})


def measured_row(row, res, busy):
    """`row` (with global_batch, seq, gpus, measured_tokens_per_gpu_s) completed from one `simulate --json` result:
    the predicted tokens/s per GPU, its error, the breakdown, the memory and, per key of `busy`, that purpose's
    busy seconds; or why it is infeasible."""
    if isinstance(res, Exception) or not res["feasible"]:
        row["infeasible"] = str(res) if isinstance(res, Exception) else res.get("infeasible_reason", "")
        return row
    t = res["iteration_time_s"]
    pred = row["global_batch"] * row["seq"] / t / row["gpus"]
    measured = row["measured_tokens_per_gpu_s"]
    row.update({"iteration_time_s": t, "predicted_tokens_per_gpu_s": pred,
                "error_pct": 100 * (pred - measured) / measured, "compute_s": res["compute_time_s"],
                "exposed_comm_s": res["exposed_comm_time_s"], "bubble_s": res["bubble_time_s"],
                "memory_GiB": res["memory_per_gpu_bytes"] / 2**30})
    row.update({k: res["breakdown"]["comm_busy_s"][purpose] for k, purpose in busy.items()})
    return row


def table_row(r, layout, busy, gpus=True):
    """One markdown row of a measured_row: run, GPUs (unless `gpus` is false: then `layout` has them), the `layout`
    cells, measured and predicted tokens/s/GPU, the error, compute / exposed comm / bubble, the `busy(r)` cell and
    the memory (or why it is infeasible)."""
    lead = " | ".join([r["run"], *([str(r["gpus"])] if gpus else []), *layout, str(r["measured_tokens_per_gpu_s"])])
    if "error_pct" not in r:
        return f"| {lead} | infeasible: {r['infeasible']} | - | - | - | - |"
    return (f"| {lead} | {r['predicted_tokens_per_gpu_s']:.0f} | {r['error_pct']:+.1f} % | {r['compute_s']:.2f} / "
            f"{r['exposed_comm_s']:.2f} / {r['bubble_s']:.2f} | {busy(r)} | {r['memory_GiB']:.1f} |")


def measured_step(r):
    """The measured iteration time of a row: its tokens per GPU over the published tokens/s/GPU."""
    return r["global_batch"] * r["seq"] / r["gpus"] / r["measured_tokens_per_gpu_s"]


def same_layout(rows):
    """A sentence comparing rows of the same model and layout in the two containers (the measured and the
    predicted throughput), or ""."""
    out = []
    for a in rows:
        for b in rows:
            if (a["model"], a["container"], b["container"]) == (b["model"], "26.04.01", "25.11") and all(
                    a[k] == b[k] for k in ("tp", "pp", "cp", "vp", "gpus")):
                m = 100 * (b["measured_tokens_per_gpu_s"] / a["measured_tokens_per_gpu_s"] - 1)
                p = 100 * (b["predicted_tokens_per_gpu_s"] / a["predicted_tokens_per_gpu_s"] - 1)
                out.append(f"{a['run']}: measured {m:+.1f} % in 25.11 at global batch {b['global_batch']} against "
                           f"26.04.01 at {a['global_batch']}, predicted {p:+.1f} % (bubble and exposed "
                           f"communication {b['bubble_s'] + b['exposed_comm_s']:.2f} s of "
                           f"{b['iteration_time_s']:.2f} s)")
    if not out:
        return ""
    return (" Per GPU, for the same layout: " + "; ".join(out) + ". The model's smaller batches lose little to the "
            "pipeline, so what the older container lost is not in it; candidates, none measured: the software "
            "(Megatron-Core and Transformer Engine five months older) and per-step costs outside the model "
            "(the optimizer step's kernels, data loading, logging).")


def markdown(rows, notes):
    """docs/validation.md section 7c2 (scripts/validation/report.py)."""
    ok = [r for r in rows if "error_pct" in r]
    lines = ["", "## 7c2. Llama 3 in FP8 on H100: Megatron-Bridge's published runs (held out)",
             "Driver: `scripts/validation/exp_mbridge_fp8.py` (sources and every setting in its docstring). "
             "Megatron-Bridge's performance summaries (the 26.04.01 and 25.11 containers, DGX-H100, FP8) against "
             "`toposweep simulate` with each run's published recipe: FP8 with per-tensor current scaling "
             "(`model.fp8_recipe = tensorwise`), bf16 gradient reduction, the distributed optimizer, sequence "
             "parallelism with overlapped TP communication, the published interleaving, no recomputation; the 8B "
             "run instead Megatron-FSDP (`strategy.zero = 3`) and block recomputation of its first 5 blocks "
             "(`strategy.recompute_layers = 5`, docs/models.md \"Block recomputation\"), on one server without TP. "
             "Nothing was chosen and nothing fitted: the H100 is the device fitted on the single-GPU operator "
             "tables (section 7b), its fp8 GEMM fraction on plain fp8 GEMMs.", "",
             "| run | container | GPUs | TP / PP / CP / VP, DP | stage split, recompute, ZeRO | measured tok/s/GPU | "
             "toposweep | error | compute / exposed comm / bubble (s) | TP busy (s) | memory GiB |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cfg = f"{r['tp']} / {r['pp']} / {r['cp']} / {r['vp']}, {r['dp']}"
        rec = f"first {r['recompute_layers']} blocks" if r["recompute_layers"] else "none"
        lines.append(table_row(r, [r["container"], str(r["gpus"]), cfg, f"{r['stage_split']}, {rec}, {r['zero']}"],
                               lambda r: f"{r['tp_busy_s']:.2f}", gpus=False))
    err = [abs(r["error_pct"]) for r in ok]
    within = [r for r in ok if abs(r["error_pct"]) <= 10]
    lines += ["", f"{len(within)} of {len(ok)} rows within 10 %, mean |error| {sum(err) / len(err):.1f} % (goal: "
              "each within 10 %, mean 5 %; errors " + ", ".join(f"{r['error_pct']:+.1f} %" for r in ok) + ").",
              "- Tensor-parallel communication hidden under the GEMMs is busy for "
              + ", ".join(f"{100 * r['tp_busy_s'] / r['iteration_time_s']:.0f} %" for r in ok if r["tp"] > 1)
              + " of the TP > 1 iterations (column `TP busy`). Each overlapped collective hides under its own "
              "GEMM, as Transformer Engine's userbuffers pair them, and what of it outlasts the GEMM extends the "
              "pass (docs/models.md, \"TP collectives\"); hidden under the pass's whole compute instead, as "
              "before, the 26.04.01 rows read -6.3 % and +9.8 %.",
              "- Before the fp8 operands' quantization and the bf16 output layer (docs/models.md \"FP8 "
              "training\"), and before `strategy.stage_split = ends` (the 405B row then split evenly, its last "
              "virtual stage two blocks and the output layer), the 26.04.01 rows read +6.8 % (70B) and +12.6 % "
              "(405B); with the first two and the even split, -6.3 % and +3.4 %.",
              "- The loss: the recipes run Transformer Engine's fused cross entropy (`model.cross_entropy = te`, "
              "docs/models.md \"Cross entropy\": 6 + 4 bytes per logit in place, where Megatron-Core's unfused "
              "kernels move 38 + 22 and keep the fp32 softmax). With the unfused kernels, as before the key, the "
              "rows would read " + ", ".join(f"{r['unfused_loss_error_pct']:+.1f} %" for r in ok
                                             if "unfused_loss_error_pct" in r) + ".",
              f"- A sensitivity, not a fit: with their data-parallel collectives holding {h100_collective_sms()} "
              "of the H100's 132 SMs while they overlap compute (`strategy.dp_sms`, the device file's assumed "
              "`collective_sms`; docs/models.md \"The DP collectives' SMs\") the rows would read "
              + ", ".join(f"{r['dp_sms_error_pct']:+.1f} %" for r in ok if "dp_sms_error_pct" in r) + ".",
              "- Stage split: the 405B recipe counts the embedding and the loss as pipeline layers "
              "(`strategy.stage_split = ends`, Megatron-Core's account_for_embedding_in_pipeline_split and "
              "account_for_loss_in_pipeline_split); the 70B recipe of both containers splits the blocks evenly.",
              "- The 25.11 rows were added after the 26.04.01 ones, with no change to the model: the same "
              "recipes at smaller global batches (70B 128, 405B 512)." + same_layout(ok)]
    for r in ok:
        if not r["recompute_layers"]:
            continue
        alt = {k: (f"{r[f'recompute_{k}_error_pct']:+.1f} % ({r[f'recompute_{k}_memory_GiB']:.1f} GiB)"
                   if f"recompute_{k}_error_pct" in r else
                   f"infeasible ({r[f'recompute_{k}_infeasible']})") for k in RECOMPUTE_ALTERNATIVES}
        lines.append(
            f"- {r['run']} ({r['container']}) is {r['error_pct']:+.1f} %: the model's compute alone, "
            f"{r['compute_s']:.2f} s, is longer than the measured step, {measured_step(r):.2f} s "
            f"({r['global_batch'] * r['seq'] / r['gpus']:.0f} tokens a GPU at the published "
            f"{r['measured_tokens_per_gpu_s']} tokens/s). Its recomputation is the recipe's; with none it would "
            f"read {alt['none']}, with every block recomputed {alt['all']} (the model fits the run without "
            "recomputing; why the recipe recomputes, fragmentation or Megatron-FSDP's buffers, is not modelled). "
            "Unlike the other rows it runs whole 4096 x 14336 GEMMs on one GPU, with nothing split over TP, so "
            "the fp8 GEMM fraction (fitted on Transformer Engine fp8 GEMMs with m = 8192, mean 0.63 of the fp8 "
            "peak) and the quantization casts the model charges each fp8 GEMM's operands (6 bytes per element with "
            "current scaling, 4 where the norm kernel takes the amax, docs/models.md \"FP8 training\") decide its "
            "step: the same run in bf16 takes "
            f"{r['bf16_iteration_time_s']:.2f} s in the model, {r['bf16_iteration_time_s'] / r['iteration_time_s']:.2f} "
            "x its fp8 step, while the measured fp8 step is "
            f"{r['bf16_iteration_time_s'] / measured_step(r):.2f} x shorter than that (the model's bf16 layer at "
            "this shape is within 2 % of its measurement, section 7b). Neither the casts nor a whole fp8 layer "
            "have been measured.")
    notes.append("Llama 3 in FP8 on H100 (Megatron-Bridge 26.04.01 and 25.11, held out; published recipes, nothing "
                 "chosen): " + ", ".join(f"{r['run']} ({r['container']}) {r['error_pct']:+.1f} %" for r in ok) + ".")
    return lines


if __name__ == "__main__":
    main(run, markdown)
