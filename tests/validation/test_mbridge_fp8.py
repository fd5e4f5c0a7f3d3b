"""Issue 32's published H100 runs in FP8, held out: Megatron-Bridge's Llama 3 70B (64 H100) and Llama 3.1 405B
(1,024 H100) pre-training with their published recipes (docs/validation.md, section 7c2; exp_mbridge_fp8.py). With
the fp8 operands quantized per-tensor current scaling (model.fp8_recipe = tensorwise) and the output layer in bf16
and the 405B recipe's pipeline split (the embedding and the loss counted as layers: stage_split = ends) the model
read -6.3 % (70B) and +9.8 % (405B; +3.4 % with an even split); without the fp8 changes it read +6.8 % and +12.6 %
(even split). With each overlapped TP collective under its own GEMM (what outlasts the GEMM extends the pass) they read
-6.5 % and +7.9 %. A change that moves them must say why."""
import pytest

import exp_mbridge_fp8


@pytest.fixture(scope="module")
def rows():
    return exp_mbridge_fp8.run()


def test_published_fp8_runs_are_within_bounds(rows):
    assert [r["model"] for r in rows] == ["llama3-70b", "llama3-405b"]
    by = {r["model"]: r for r in rows}
    assert -9.0 <= by["llama3-70b"]["error_pct"] <= -3.0, by["llama3-70b"]
    assert 6.0 <= by["llama3-405b"]["error_pct"] <= 10.0, by["llama3-405b"]
    assert [r["stage_split"] for r in rows] == ["even", "ends"]
    for r in rows:
        # Published layouts fit the H100's 80 GiB and run the pipeline interleaved, TP hidden under compute.
        assert r["memory_GiB"] < 80, r
        assert r["exposed_comm_s"] < 0.05 * r["iteration_time_s"], r
