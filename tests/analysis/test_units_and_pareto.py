"""Unit parsing and the Pareto frontier, against hand-worked values and brute force."""

import math
import random

import numpy as np
import pandas as pd
import pytest

from analysis import best_time_at_cost, format_quantity, frontier, pareto_mask, parse_quantity


@pytest.mark.parametrize("text, value, unit", [
    ("100Gbps", 12.5e9, "B/s"),      # 100e9 bits/s / 8
    ("12.5GB/s", 12.5e9, "B/s"),
    ("25GBps", 25e9, "B/s"),
    ("1us", 1e-6, "s"),
    ("500ns", 5e-7, "s"),
    ("64MiB", 64 * 2**20, "B"),
    ("1GB", 1e9, "B"),
    ("1e9B", 1e9, "B"),
    ("2KiB/s", 2048.0, "B/s"),
    ("8", 8.0, ""),
])
def test_parse_quantity_matches_the_contract_units(text, value, unit):
    parsed, kind = parse_quantity(text)
    assert parsed == pytest.approx(value, rel=1e-15)
    assert kind == unit


@pytest.mark.parametrize("text", ["", "Gbps", "12 parsecs", "1.2.3GB"])
def test_parse_quantity_rejects_malformed_text(text):
    with pytest.raises(ValueError):
        parse_quantity(text)


def test_format_quantity_uses_decimal_prefixes():
    assert format_quantity(0.0123, "s") == "12.3 ms"
    assert format_quantity(12.5e9, "B/s") == "12.5 GB/s"
    assert format_quantity(1.5e6, "USD") == "$1.5M"
    assert format_quantity(math.nan, "s") == "-"


def brute_force(values):
    n = len(values)
    keep = []
    for i in range(n):
        dominated = any(all(values[j][k] <= values[i][k] for k in range(len(values[i])))
                        and any(values[j][k] < values[i][k] for k in range(len(values[i])))
                        for j in range(n))
        keep.append(not dominated)
    return np.array(keep, dtype=bool)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("seed", range(20))
def test_pareto_mask_equals_the_definition(dims, seed):
    rng = random.Random(seed)
    # Values on a small integer grid, so equal vectors and partial ties are common.
    values = [[rng.randint(0, 5) for _ in range(dims)] for _ in range(rng.randint(1, 40))]
    assert np.array_equal(pareto_mask(values), brute_force(values))


def test_equal_points_stay_on_the_frontier_together():
    values = [(1, 3), (1, 3), (2, 2), (3, 1), (2, 3), (3, 3)]
    assert pareto_mask(values).tolist() == [True, True, True, True, False, False]


def frame_of(rows):
    return pd.DataFrame(rows, columns=["index", "status", "cost_usd", "iteration_time_s", "family"])


def test_frontier_ignores_points_that_are_not_evaluated():
    frame = frame_of([(0, 0, 2.0, 2.0, "a"), (1, 1, 1.0, 1.0, "a"), (2, 2, 1.0, 1.0, "a"),
                      (3, 0, 3.0, 1.0, "a"), (4, 0, math.nan, 0.5, "a")])
    assert frontier(frame)["index"].tolist() == [0, 3]


def test_frontier_with_a_maximised_objective():
    # Maximising samples/s: (cost 1, 10/s) and (cost 2, 30/s) are optimal, (cost 3, 20/s) is not.
    frame = pd.DataFrame({"index": [0, 1, 2], "status": [0, 0, 0], "cost_usd": [1.0, 2.0, 3.0],
                          "samples_per_s": [10.0, 30.0, 20.0]})
    assert frontier(frame, "cost_usd,max:samples_per_s")["index"].tolist() == [0, 1]


def test_frontier_per_group():
    frame = frame_of([(0, 0, 1.0, 5.0, "a"), (1, 0, 2.0, 4.0, "a"), (2, 0, 3.0, 4.5, "a"),
                      (3, 0, 9.0, 9.0, "b"), (4, 0, 8.0, 9.5, "b")])
    # Overall, family b is dominated; per family, b keeps both of its points.
    assert frontier(frame)["index"].tolist() == [0, 1]
    assert sorted(frontier(frame, group_by="family")["index"].tolist()) == [0, 1, 3, 4]


def test_best_time_at_cost_is_the_baseline_staircase():
    costs, times = [10.0, 20.0, 30.0], [5.0, 6.0, 2.0]
    got = best_time_at_cost(costs, times, [5.0, 10.0, 25.0, 30.0, 100.0])
    # Below the cheapest baseline point there is no baseline; the 20$ point never helps (6 > 5).
    assert np.isnan(got[0])
    assert got[1:].tolist() == [5.0, 5.0, 2.0, 2.0]


@pytest.mark.parametrize("dims", [2, 3, 4])
def test_pareto_mask_equals_the_definition_on_larger_sets(dims):
    rng = np.random.default_rng(dims)
    values = rng.integers(0, 12, size=(250, dims)).tolist()  # many partial and full ties
    assert np.array_equal(pareto_mask(values), brute_force(values))
