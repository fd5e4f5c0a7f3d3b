"""Issue 33's measured MoE runs (docs/validation.md section 7d): four DeepSeek-V3 pre-training runs through
`toposweep simulate --json` (scripts/validation/exp_moe.py). The bounds are what the model reaches today, with the
expert-parallel All-to-All overlapped and dispatched as published (or chosen where not), the fp8 runs' operands
quantized with their published scaling recipe (model.fp8_recipe) and their output layers in bf16, the router probabilities
applied in the experts' activation (model.moe_probs_in_activation: Megatron-Core since v0.13; memory only) and the
recomputation as published (DeepSeek-V3: RMSNorm, MLA up-projections and the MoE SwiGLU, bf16 optimizer moments, fp8
MoE activations; Megatron-Bridge 25.09's recipe: mla_up_proj, mlp) or chosen among none, selective (mla_up_proj,
mlp) and full (AutoModel):
  * every overlapped All-to-All runs on 20 of the GPU's SMs (strategy.ep_sms: DeepEP's default, DeepSeek-V3
    Sec. 3.2.2), which the pass's compute loses while it runs; before that the rows read +28.2, +29.9, +16.5 and
    +17.6 % (0 of 4 within 15 %), then +19.5, +18.9, +9.7 and +7.8 % (2 of 4);
  * only the passes the schedule pairs overlap (Megatron-Core: the pipeline's steady state), the warm-up forwards
    and cool-down backwards keep their All-to-Alls exposed: +15.5, +9.6, -17.1 and +2.0 % (2 of 4);
  * DeepSeek-V3's own 2,048-H800 run fits in 56.6 GiB and runs 2.0 % fast (blockwise quantization; the embedding,
    the MTP module and the loss counted as pipeline layers: chosen; with an even split -24.2 %, its last stage
    carrying four blocks, the MTP module and two bf16 output heads); with the expert outputs kept for the
    probabilities' gradient it would need 82.9 GiB of 80;
  * the Megatron-Bridge run, with its 25.09 recipe's recomputation, All-to-All overlap, bf16 dispatch (Megatron-
    Core's DeepEP path), tensorwise fp8, pipeline layout `Et|(tt|)*30mL` (stage_split = ends) and bf16 gradient
    reduction, was predicted 15.5 % too fast with its experts split over TP 2 and TP overlap chosen full; with the
    recipe's expert tensor parallelism 1 (strategy.etp: EP 64 folded over TP 2 x DP 64) and its tp_comm_overlap =
    False (Transformer Engine's backward-only overlap) it reads +20.3 % (full recomputation would read -9.3 %, an
    even split +1.0 %);
  * the same run with its recipe's Transformer Engine cross entropy (model.cross_entropy = te, cross_entropy_fusion_impl
    "te" in its yaml; 6 + 4 bytes a logit instead of 38 + 22) reads +23.4 %: its last virtual stage, with the main
    and the MTP output heads, is faster;
  * the AutoModel runs fit only with full recomputation (+9.6 %, -17.1 % with the ends split, chosen);
  * with the All-to-All exposed and in bf16 (Megatron-Core's defaults) every run 20-45 % too slow;
  * every run's dispatcher sends a token once per destination node (strategy.ep_dispatcher = deepep: DeepEP, TE +
    DeepEP, DeepSeek's own kernels, all published): 0.662 of NCCL's inter-node bytes; the rows read +46.6, +6.6,
    -4.4 and +7.4 % (3 of 4 within 15 %; with NCCL's All-to-All +23.4, +1.6, -16.6, +2.0), exposed and in bf16
    2-24 % too slow; with DeepSeek-V3's node-limited routing (4 of 8 groups, a group a server: 0.454 of NCCL's
    bytes) +53.3, +10.0, +4.4 and +10.9 % (3 of 4 within 15 %), exposed and in bf16 -14 ... +14 %.
A change that moves them must say why."""
import pytest

import exp_moe


@pytest.fixture(scope="module")
def rows():
    return exp_moe.run()


def test_runs_are_within_the_documented_errors(rows):
    assert len(rows) == 4
    by = {r["name"]: r for r in rows}
    predicted = [r for r in rows if "error_pct" in r]
    assert {r["name"] for r in predicted} == set(by)
    for r in predicted:
        assert abs(r["error_pct"]) <= 60.0, r
        # The exposed bf16 All-to-All: every run too slow, the gap the overlap and fp8 dispatch close.
        exposed = 100 * (r["exposed_bf16_tokens_per_gpu_s"] / r["measured_tokens_per_gpu_s"] - 1)
        assert -45.0 <= exposed <= 20.0, r
        assert r["predicted_tokens_per_gpu_s"] > r["exposed_bf16_tokens_per_gpu_s"], r
    assert sum(abs(r["error_pct"]) <= 15.0 for r in predicted) == 3
    # Megatron-Bridge's recipe publishes its recomputation and overlap (exp_moe.py's docstring); full recomputation
    # is timed beside it, never chosen.
    mb = by["megatron-bridge-25.09-dsv3-1024"]
    assert mb["recompute"] == "selective (mla_up_proj,mlp)" and mb["recompute_published"], mb
    assert mb["ep_overlap"] and mb["overlap_published"], mb
    assert mb["dispatch"] == "bf16" and mb["dispatch_published"], mb
    assert mb["stage_split"] == "ends" and mb["stage_split_published"], mb
    assert 49.0 <= mb["error_pct"] <= 57.0, mb
    full = 100 * (mb["tokens_per_gpu_s_by_recompute"]["full"] / mb["measured_tokens_per_gpu_s"] - 1)
    assert 13.0 <= full <= 22.0, mb
    even = 100 * (mb["tokens_per_gpu_s_by_stage_split"]["even"] / mb["measured_tokens_per_gpu_s"] - 1)
    assert 20.0 <= even <= 28.0, mb
    # The AutoModel runs are BF16: their dispatch is not chosen; only full recomputation fits them.
    for name in ("automodel-dsv3-1024", "automodel-dsv3-256"):
        assert by[name]["dispatch"] == "bf16" and by[name]["dispatch_published"], by[name]
        assert by[name]["recompute"] == "full", by[name]


def test_deepseek_v3_fits_only_without_the_expert_outputs_kept(rows):
    ds = next(r for r in rows if r["name"] == "deepseek-v3-report-2048")
    assert ds["recompute_published"] and ds["recompute"] == "selective (layernorm,mla_up_proj,moe_act)", ds
    assert not ds["stage_split_published"], ds
    assert 8.0 <= ds["error_pct"] <= 14.0, ds
    even = 100 * (ds["tokens_per_gpu_s_by_stage_split"]["even"] / ds["measured_tokens_per_gpu_s"] - 1)
    assert -22.0 <= even <= -15.0, ds
    assert 50.0 <= ds["memory_GiB"] <= 65.0, ds
    assert ds["memory_GiB_outputs_kept"] > 80.0 and not ds["feasible_outputs_kept"], ds
