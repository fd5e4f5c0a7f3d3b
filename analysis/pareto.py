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

    Rows are visited in lexicographic order: a dominating row is lexicographically smaller than the
    row it dominates, so each row only has to be compared with the frontier found before it (and a
    row dominated by a dominated row is dominated by a frontier row, by transitivity)."""
    values = np.asarray(values, dtype=float)
    n = values.shape[0]
    mask = np.zeros(n, dtype=bool)
    if n == 0:
        return mask
    order = np.lexsort(values.T[::-1])
    kept = np.empty((0, values.shape[1]))
    kept_rows = []
    for row in order:
        v = values[row]
        if len(kept_rows):
            no_worse = np.all(kept <= v, axis=1)
            better = np.any(kept < v, axis=1)
            if np.any(no_worse & better):
                continue
        kept = np.vstack([kept, v])
        kept_rows.append(row)
    mask[kept_rows] = True
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
