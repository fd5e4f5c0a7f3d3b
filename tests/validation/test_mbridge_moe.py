"""Issue 33's measured MoE runs, held out: Megatron-Bridge's Qwen3-30B-A3B FP8 pre-training on 16 H100 with its
published recipe (docs/validation.md section 7d2; exp_mbridge_moe.py): EP 16 over two servers, the All-to-All exposed
and in bf16, force-balanced routing. The model reads -9.2 % (within issue 33's 15 %), bound by the All-to-All, which
HybridEP's one copy per server over InfiniBand (not modelled) would shorten. A change that moves it must say why."""
import pytest

import exp_mbridge_moe


@pytest.fixture(scope="module")
def rows():
    return exp_mbridge_moe.run()


def test_published_moe_run_is_within_bounds(rows):
    assert [r["model"] for r in rows] == ["qwen3-30b-a3b"]
    r = rows[0]
    assert -12.0 <= r["error_pct"] <= -6.0, r
    assert r["memory_GiB"] < 80, r
    # Not overlapped: the All-to-All is exposed, and it is most of the exposed communication.
    assert r["exposed_comm_s"] > r["compute_s"], r
    assert r["ep_busy_s"] > 0.99 * r["exposed_comm_s"], r
