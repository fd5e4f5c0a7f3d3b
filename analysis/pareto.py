"""Pareto frontiers, computed independently of the C++ implementation so each can check the other.

A point is off the frontier only if another point is no worse in every objective and strictly
better in one; points with equal objective vectors stay on it together. Objectives are minimised
unless written ``max:NAME``. Only rows with ``status`` 0 and finite objective values take part.
"""

import numpy as np
import pandas as pd


def parse_objectives(objectives):
    """``"cost_usd,max:samples_per_s"`` or a list -> ``[("cost_usd", False), ("samples_per_s", True)]``
    (name, maximised)."""
    if isinstance(objectives, str):
        objectives = [o for o in objectives.split(",") if o.strip()]
    parsed = []
    for objective in objectives:
        objective = objective.strip()
        if objective.startswith("max:"):
            parsed.append((objective[4:], True))
        elif objective.startswith("min:"):
            parsed.append((objective[4:], False))
        else:
            parsed.append((objective, False))
    return parsed


def pareto_mask(values):
    """Boolean mask of the non-dominated rows of `values` (n x k, every column minimised).

    The lexicographically smallest remaining row is never dominated by a remaining row, nor by a
    removed one (whatever dominated a removed row dominates this row too, by transitivity): take it
    onto the frontier, drop every row it dominates, repeat. Equal rows do not dominate each other,
    so they all stay. One vectorised pass per frontier row: O(n * frontier size)."""
    values = np.asarray(values, dtype=float)
    n = values.shape[0]
    mask = np.zeros(n, dtype=bool)
    if n == 0:
        return mask
    if values.shape[1] == 2:
        return _pareto_mask_2d(values)
    remaining = np.lexsort(values.T[::-1])
    while len(remaining):
        head = remaining[0]
        mask[head] = True
        rest = values[remaining[1:]]
        dominated = np.all(values[head] <= rest, axis=1) & np.any(values[head] < rest, axis=1)
        remaining = remaining[1:][~dominated]
    return mask


def _pareto_mask_2d(values):
    """Two objectives in O(n log n): (a, b) is dominated exactly when some point with the same a
    has a smaller b, or some point with a smaller a has b no larger."""
    a, b = values[:, 0], values[:, 1]
    order = np.lexsort((b, a))
    a_sorted, b_sorted = a[order], b[order]
    group_start = np.r_[True, a_sorted[1:] != a_sorted[:-1]]
    group_id = np.cumsum(group_start) - 1
    group_min_b = b_sorted[group_start]  # sorted by b within a group, so the first is the least
    # Least b over every group before this one (inf for the first group).
    before = np.r_[np.inf, np.minimum.accumulate(group_min_b)[:-1]]
    on = (b_sorted == group_min_b[group_id]) & (b_sorted < before[group_id])
    mask = np.zeros(len(a), dtype=bool)
    mask[order[on]] = True
    return mask


def frontier(frame, objectives=("cost_usd", "iteration_time_s"), group_by=None):
    """Rows of `frame` on the Pareto frontier of `objectives`, sorted by the objectives.

    With `group_by` (a column name), one frontier per group, concatenated."""
    parsed = parse_objectives(objectives)
    names = [name for name, _ in parsed]
    missing = [name for name in names if name not in frame]
    if missing:
        raise KeyError(f"unknown objective(s) {missing}")
    candidates = frame[frame["status"] == 0]
    signed = np.column_stack([(-1.0 if maximised else 1.0) * candidates[name].to_numpy(dtype=float)
                              for name, maximised in parsed]) if len(candidates) else np.empty((0, len(names)))
    finite = np.all(np.isfinite(signed), axis=1)
    candidates, signed = candidates[finite], signed[finite]
    if group_by is None:
        on = candidates[pareto_mask(signed)]
    else:
        keys = candidates[group_by].astype(object).to_numpy()
        parts = []
        for key in pd.unique(keys):
            rows = keys == key
            parts.append(candidates[rows][pareto_mask(signed[rows])])
        on = pd.concat(parts) if parts else candidates.iloc[0:0]
    by = ([group_by] if group_by is not None else []) + names
    return on.sort_values(by, kind="stable")


def best_time_at_cost(baseline_costs, baseline_times, costs):
    """For each cost c in `costs`, the shortest baseline time among baseline points of cost <= c
    (NaN when the baseline has no point that cheap): the baseline's frontier as a step function."""
    baseline_costs = np.asarray(baseline_costs, dtype=float)
    baseline_times = np.asarray(baseline_times, dtype=float)
    order = np.argsort(baseline_costs, kind="stable")
    sorted_costs = baseline_costs[order]
    running_best = np.minimum.accumulate(baseline_times[order]) if len(order) else np.array([])
    costs = np.asarray(costs, dtype=float)
    positions = np.searchsorted(sorted_costs, costs, side="right") - 1
    result = np.full(costs.shape, np.nan)
    ok = positions >= 0
    result[ok] = running_best[positions[ok]]
    return result
