"""Issue 33's measured MoE runs (docs/validation.md section 7d): four DeepSeek-V3 pre-training runs through
`toposweep simulate --json` (scripts/validation/exp_moe.py). The bounds are what the model reaches today, not the
issue's goal of 15 %: every run predicted too slow by 32-65 %, the expert-parallel All-to-All exposed where the
runs overlap it. A change that moves them must say why."""
import pytest

import exp_moe


@pytest.fixture(scope="module")
def rows():
    return exp_moe.run()


def test_every_run_is_feasible_and_predicted_too_slow_by_the_documented_gap(rows):
    assert len(rows) == 4
    for r in rows:
        assert "error_pct" in r, r
        assert -67.0 <= r["error_pct"] <= -30.0, r
        # Where the time goes: the exposed communication (the EP All-to-All) is the largest part.
        assert r["exposed_comm_s"] > r["compute_s"], r
