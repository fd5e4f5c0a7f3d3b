"""Issue 33's measured MoE runs, held out: Megatron-Bridge's Qwen3 FP8 pre-training on H100 with its published recipes
(docs/validation.md section 7d2; exp_mbridge_moe.py), force-balanced routing, the All-to-All in bf16, expert tensor
parallelism 1:
  * Qwen3-30B-A3B on 16 H100: EP 16 over two servers, the All-to-All exposed. The model reads -9.2 % (within issue
    33's 15 %), bound by the All-to-All, which HybridEP's one copy per server over InfiniBand (not modelled) would
    shorten.
  * Qwen3-235B-A22B on 256 H100: TP 2, PP 8, VP 4, EP 32 folded over TP x DP (strategy.etp = 1), the All-to-All
    overlapped. The model reads +33.4 %: the All-to-All (about 52 s a GPU) fully hidden under 42 s of compute, where
    the measured 76.6 s step hides less of it; exposed it reads -14.6 %.
  * GPT-OSS 120B on 64 H100 in bf16: TP 1, PP 4, EP 8 inside a server, a 128-token window on every other block.
    The model reads +36.9 %: its compute alone is two thirds of the measured step (host synchronisation and
    per-expert GEMM launches are candidates, not modelled); without the windows it reads +32.7 %.
With the recipes' Transformer Engine cross entropy (model.cross_entropy = te: the performance overrides set it for
every model, GPT-OSS's recipe's "native" included) the three read -6.1 %, +44.0 % and +64.8 %: GPT-OSS's last stage
loses 1.7 s of the unfused loss over its 201,088-word vocabulary. With the 30B run's HybridEP dispatcher (strategy.ep_dispatcher = deepep: one copy of a token per destination server,
0.249 of NCCL's inter-server bytes) it reads +60.3 %. A change that moves them must say why."""
import pytest

import exp_mbridge_moe


@pytest.fixture(scope="module")
def rows():
    return exp_mbridge_moe.run()


def test_published_moe_runs_are_within_bounds(rows):
    assert [r["model"] for r in rows] == ["qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-120b"]
    small, large, oss = rows
    # HybridEP: one copy per destination server (strategy.ep_dispatcher = deepep), 0.249 of NCCL's inter-server
    # bytes: far too fast at the NICs' rate; with NCCL's All-to-All the row reads as before the key.
    assert 55.0 <= small["error_pct"] <= 66.0, small
    assert -9.0 <= small["nccl_dispatch_error_pct"] <= -3.0, small
    assert small["memory_GiB"] < 80, small
    # Not overlapped: the All-to-All is exposed, and it is most of the exposed communication.
    assert small["exposed_comm_s"] > 0.25 * small["compute_s"], small
    assert small["ep_busy_s"] > 0.99 * small["exposed_comm_s"], small
    assert small["exposed_error_pct"] == small["error_pct"], small
    # Folded and overlapped: fits, too fast with the overlap, too slow without it (the measured step between).
    assert large["etp"] == 1 and large["ep"] == 32 and large["tp"] == 2, large
    assert large["memory_GiB"] < 80, large
    assert 39.0 <= large["error_pct"] <= 49.0, large
    assert -15.0 <= large["exposed_error_pct"] <= -7.0, large
    # GPT-OSS: the All-to-All on NVLink, not overlapped; compute-bound and too fast by the same margin as above.
    assert oss["memory_GiB"] < 80, oss
    assert 60.0 <= oss["error_pct"] <= 70.0, oss
    assert oss["exposed_error_pct"] == oss["error_pct"], oss
    assert oss["compute_s"] > 5 * oss["exposed_comm_s"], oss
    # The unfused cross entropy only slows each run down (GPT-OSS's last stage most: its 201,088-word vocabulary).
    for r in rows:
        assert r["unfused_loss_error_pct"] < r["error_pct"], r
        assert r["dp_sms_error_pct"] <= r["error_pct"], r  # the DP collectives' SMs only slow a run down
    assert oss["error_pct"] - oss["unfused_loss_error_pct"] > 20.0, oss
    # Without the windows every block's attention runs over the whole sequence: slower, so less fast.
    assert 54.0 <= oss["no_window_error_pct"] < oss["error_pct"], oss
