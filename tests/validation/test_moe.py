"""Issue 33's measured MoE runs (docs/validation.md section 7d): four DeepSeek-V3 pre-training runs through
`toposweep simulate --json` (scripts/validation/exp_moe.py). The bounds are what the model reaches today: with the
expert-parallel All-to-All overlapped and dispatched as published (or chosen where not), three runs within 16 % and
DeepSeek-V3's own 2,048-H800 run 22.5 % too slow (full recomputation, the only choice that fits the model's memory);
with the All-to-All exposed and in bf16 (Megatron-Core's defaults) every run 38-65 % too slow. A change that moves
them must say why."""
import pytest

import exp_moe


@pytest.fixture(scope="module")
def rows():
    return exp_moe.run()


def test_every_run_is_feasible_and_within_the_documented_errors(rows):
    assert len(rows) == 4
    by = {r["name"]: r for r in rows}
    for r in rows:
        assert "error_pct" in r, r
        assert abs(r["error_pct"]) <= 25.0, r
        # The exposed bf16 All-to-All: every run too slow, the gap the overlap and fp8 dispatch close.
        exposed = 100 * (r["exposed_bf16_tokens_per_gpu_s"] / r["measured_tokens_per_gpu_s"] - 1)
        assert -67.0 <= exposed <= -30.0, r
        assert r["predicted_tokens_per_gpu_s"] > r["exposed_bf16_tokens_per_gpu_s"], r
    assert sum(abs(r["error_pct"]) <= 16.0 for r in rows) == 3
    # DeepSeek-V3's published choices are used as published, not chosen.
    ds = by["deepseek-v3-report-2048"]
    assert ds["ep_overlap"] and ds["dispatch"] == "fp8" and ds["overlap_published"] and ds["dispatch_published"]
    assert -25.0 <= ds["error_pct"] <= -20.0, ds
    # The AutoModel runs are BF16: their dispatch is not chosen.
    for name in ("automodel-dsv3-1024", "automodel-dsv3-256"):
        assert by[name]["dispatch"] == "bf16" and by[name]["dispatch_published"], by[name]
