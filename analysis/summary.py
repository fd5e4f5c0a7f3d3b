"""The summary table of a results file: one row per topology family and one for all points."""

import math

import numpy as np
import pandas as pd

from . import pareto as fr
from . import units as u
from .results import status_counts

COLUMNS = ["family", "points", "evaluated", "infeasible", "failed", "frontier_points",
           "best_iteration_time_s", "best_time_cost_usd", "best_time_index",
           "min_cost_usd", "min_cost_iteration_time_s", "min_cost_index", "max_speedup"]

ALL = "(all)"


def _extreme(evaluated, first, second):
    """The row minimising `first`, ties broken by `second`, then by the smallest point index."""
    if evaluated.empty:
        return None
    return evaluated.sort_values([first, second, "index"], kind="stable").iloc[0]


def _row(name, group, speedup):
    counts = status_counts(group)
    evaluated = group[(group["status"] == 0) & np.isfinite(group["cost_usd"])
                      & np.isfinite(group["iteration_time_s"])]
    fastest = _extreme(evaluated, "iteration_time_s", "cost_usd")
    cheapest = _extreme(evaluated, "cost_usd", "iteration_time_s")
    return {
        "family": name,
        "points": len(group),
        "evaluated": counts["evaluated"],
        "infeasible": counts["infeasible"],
        "failed": counts["failed"],
        "frontier_points": len(fr.frontier(evaluated, ("cost_usd", "iteration_time_s"))),
        "best_iteration_time_s": float(fastest["iteration_time_s"]) if fastest is not None else math.nan,
        "best_time_cost_usd": float(fastest["cost_usd"]) if fastest is not None else math.nan,
        "best_time_index": int(fastest["index"]) if fastest is not None else -1,
        "min_cost_usd": float(cheapest["cost_usd"]) if cheapest is not None else math.nan,
        "min_cost_iteration_time_s": float(cheapest["iteration_time_s"]) if cheapest is not None else math.nan,
        "min_cost_index": int(cheapest["index"]) if cheapest is not None else -1,
        "max_speedup": speedup,
    }


def summary_table(frame, speedups=None, family="family"):
    """One row per family (sorted by name) and a final ``(all)`` row. `speedups` is the table
    returned by plots.speedup_at_equal_cost (its per-family maximum fills ``max_speedup``)."""
    best_speedup = {}
    if speedups is not None and len(speedups):
        finite = speedups[np.isfinite(speedups["speedup"])]
        best_speedup = finite.groupby("family")["speedup"].max().to_dict()
    rows = [_row(name, group, float(best_speedup.get(name, math.nan)))
            for name, group in frame.groupby(family, sort=True, observed=True)]
    rows.append(_row(ALL, frame, math.nan))
    return pd.DataFrame(rows, columns=COLUMNS)


def to_markdown(table, first_header="family"):
    """The table as GitHub markdown, values with units and prefixes; `first_header` names the
    grouping column (the table's ``family`` column holds its values)."""
    headers = [first_header, "points", "evaluated", "infeasible", "failed", "on frontier",
               "best iteration time", "its cost", "lowest cost", "its iteration time", "max speedup"]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for _, r in table.iterrows():
        speedup = f"{r['max_speedup']:.3g}x" if math.isfinite(r["max_speedup"]) else "-"
        cells = [str(r["family"]), str(r["points"]), str(r["evaluated"]), str(r["infeasible"]),
                 str(r["failed"]), str(r["frontier_points"]),
                 u.format_quantity(r["best_iteration_time_s"], u.SECONDS),
                 u.format_quantity(r["best_time_cost_usd"], u.USD),
                 u.format_quantity(r["min_cost_usd"], u.USD),
                 u.format_quantity(r["min_cost_iteration_time_s"], u.SECONDS), speedup]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
