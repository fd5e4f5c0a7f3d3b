"""Issue 33's measured MoE runs (docs/validation.md section 7d): four DeepSeek-V3 pre-training runs through
`toposweep simulate --json` (scripts/validation/exp_moe.py). The bounds are what the model reaches today, with the
expert-parallel All-to-All overlapped and dispatched as published (or chosen where not) and the recomputation as
published (DeepSeek-V3: RMSNorm, MLA up-projections and the MoE SwiGLU, bf16 optimizer moments, fp8 MoE
activations) or chosen among none, selective with NVIDIA's recipe modules (mla_up_proj, mlp) and full:
  * DeepSeek-V3's own 2,048-H800 run does not fit the model's memory with its published choices (82.9 GiB of
    80 GiB, the 6 GiB reserve included); with the reserve waived it runs 5 % too slow (a diagnosis);
  * the Megatron-Bridge run, with its 25.09 recipe's recomputation (selective: mla_up_proj, mlp), All-to-All
    overlap and bf16 gradient reduction, is predicted 36.5 % too fast (full recomputation would read +2.8 %);
  * the AutoModel runs fit only with full recomputation (+15.8 %, +6.0 %);
  * with the All-to-All exposed and in bf16 (Megatron-Core's defaults) every predicted run 30-45 % too slow.
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
    assert {r["name"] for r in predicted} == set(by) - {"deepseek-v3-report-2048"}
    for r in predicted:
        assert abs(r["error_pct"]) <= 40.0, r
        # The exposed bf16 All-to-All: every run too slow, the gap the overlap and fp8 dispatch close.
        exposed = 100 * (r["exposed_bf16_tokens_per_gpu_s"] / r["measured_tokens_per_gpu_s"] - 1)
        assert -45.0 <= exposed <= -30.0, r
        assert r["predicted_tokens_per_gpu_s"] > r["exposed_bf16_tokens_per_gpu_s"], r
    assert sum(abs(r["error_pct"]) <= 16.0 for r in predicted) == 2
    # Megatron-Bridge's recipe publishes its recomputation and overlap (exp_moe.py's docstring); full recomputation
    # is timed beside it, never chosen.
    mb = by["megatron-bridge-25.09-dsv3-1024"]
    assert mb["recompute"] == "selective (mla_up_proj,mlp)" and mb["recompute_published"], mb
    assert mb["ep_overlap"] and mb["overlap_published"], mb
    assert 30.0 <= mb["error_pct"] <= 40.0, mb
    full = 100 * (mb["tokens_per_gpu_s_by_recompute"]["full"] / mb["measured_tokens_per_gpu_s"] - 1)
    assert 0.0 <= full <= 5.0, mb
    # The AutoModel runs are BF16: their dispatch is not chosen; only full recomputation fits them.
    for name in ("automodel-dsv3-1024", "automodel-dsv3-256"):
        assert by[name]["dispatch"] == "bf16" and by[name]["dispatch_published"], by[name]
        assert by[name]["recompute"] == "full", by[name]


def test_deepseek_v3_published_choices_exceed_the_memory_by_less_than_the_reserve(rows):
    ds = next(r for r in rows if r["name"] == "deepseek-v3-report-2048")
    assert ds["recompute_published"]
    assert any(x.startswith("needs 82.9 GiB per GPU") for x in ds["infeasible"]), ds
    assert -8.0 <= ds["waived_reserve_error_pct"] <= -3.0, ds
