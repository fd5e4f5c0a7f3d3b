"""Issue 32's published >= 8,192-GPU run, held out: Llama 3 405B on 8,192 and 16,384 H100 (Dubey et al. 2024,
Table 4), the 131k-token row with context parallelism 16 included (docs/validation.md, "Llama 3 405B"), with the
paper's pipeline balance (Sec. 3.3.2: one layer fewer on the first and the last stage, strategy.stage_split = ends).
The bounds are what the model reaches today with the causal attention count (6 L h s per token: -6.8 %, -1.2 %,
+6.1 %; with an even split -11.6 %, -6.2 %, +1.6 %); a change that moves them must say why."""
import pytest

import exp_llama3

BOUND_PCT = 8.0  # every row, causal count (issue 32's goal: 10 %)
MEAN_PCT = 5.5  # (goal: 5 %)


@pytest.fixture(scope="module")
def rows():
    return exp_llama3.run()


def test_every_published_row_is_simulated_within_bounds(rows):
    assert len(rows) == 3
    errors = [abs(r["error_causal_pct"]) for r in rows]
    assert max(errors) <= BOUND_PCT, rows
    assert sum(errors) / len(errors) <= MEAN_PCT, rows
    # The long-context row runs with context parallelism 16 and is feasible only because of it.
    long = rows[2]
    assert long["cp"] == 16 and long["seq"] == 131072
    assert long["iteration_time_s"] > 0
