"""The report's figures. Each function draws one figure into a PNG of exactly
FIGURE_WIDTH_PX x FIGURE_HEIGHT_PX pixels (no tight bounding box, so sizes are predictable) and
returns the numbers it plotted, so callers and tests can check them."""

import math

import matplotlib

matplotlib.use("Agg")  # files only; never needs a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from . import pareto as fr  # noqa: E402
from . import units as u  # noqa: E402

FIGURE_WIDTH_PX = 1000
FIGURE_HEIGHT_PX = 700
DPI = 100


def _figure():
    return plt.figure(figsize=(FIGURE_WIDTH_PX / DPI, FIGURE_HEIGHT_PX / DPI), dpi=DPI)


def _save(fig, path):
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def _titled(title, model):
    """Figures of one model say which: points of different models are never drawn together unless
    the caller pools them."""
    return f"{model}: {title}" if model else title


def _unit_label(name, unit):
    return f"{name} [{unit}]" if unit else name


def _positive(values):
    values = np.asarray(values, dtype=float)
    return values[np.isfinite(values) & (values > 0)]


def _log_if_wide(axis_setter, values):
    """Log scale when the positive values span more than a factor 20 (costs and times usually do)."""
    values = _positive(values)
    if len(values) and values.max() / values.min() > 20:
        axis_setter("log")


def cost_vs_time(frame, path, family="family", cost="cost_usd", time="iteration_time_s", model=None):
    """Scatter of every evaluated point, cost against iteration time, one colour per topology
    family, with each family's Pareto frontier drawn as a staircase. `model` names the model in the
    title. Returns {family: frontier}."""
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    evaluated = frame[(frame["status"] == 0) & np.isfinite(frame[cost]) & np.isfinite(frame[time])]
    frontiers = {}
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (name, group) in enumerate(evaluated.groupby(family, sort=True, observed=True)):
        colour = colours[i % len(colours)]
        ax.scatter(group[cost], group[time], s=10, alpha=0.35, color=colour, edgecolors="none")
        front = fr.frontier(group, (cost, time))
        frontiers[name] = front
        ax.step(front[cost], front[time], where="post", color=colour, linewidth=2,
                marker="o", markersize=4, label=f"{name} ({len(group)} points, {len(front)} on frontier)")
    ax.set_xlabel(_unit_label("network cost", "US$"))
    ax.set_ylabel(_unit_label("iteration time", "s"))
    _log_if_wide(ax.set_xscale, evaluated[cost])
    _log_if_wide(ax.set_yscale, evaluated[time])
    ax.set_title(_titled("Cost vs iteration time; lines: Pareto frontier per topology family", model))
    ax.grid(True, which="both", alpha=0.3)
    if frontiers:
        ax.legend(loc="best", fontsize=9)
    else:
        ax.text(0.5, 0.5, "no evaluated points", ha="center", va="center", transform=ax.transAxes)
    _save(fig, path)
    return frontiers


def speedup_at_equal_cost(frame, path, baseline, family="family", cost="cost_usd", time="iteration_time_s",
                          model=None):
    """Speedup of each family over the baseline family at equal cost budget: for a budget c, the
    best baseline time among baseline points costing at most c, divided by the family's best time
    at the same budget. Both are staircases that step at frontier costs, so the ratio is evaluated at
    every frontier cost of either family where both are defined. Returns a DataFrame (family,
    cost_usd (the budget), iteration_time_s, baseline_time_s, speedup) of the plotted points."""
    evaluated = frame[(frame["status"] == 0) & np.isfinite(frame[cost]) & np.isfinite(frame[time])]
    base = fr.frontier(evaluated[evaluated[family] == baseline], (cost, time))
    rows = []
    for name, group in evaluated.groupby(family, sort=True, observed=True):
        if name == baseline:
            continue
        front = fr.frontier(group, (cost, time))
        budgets = np.union1d(front[cost].to_numpy(dtype=float), base[cost].to_numpy(dtype=float))
        own = fr.best_time_at_cost(front[cost], front[time], budgets)
        base_time = fr.best_time_at_cost(base[cost], base[time], budgets)
        for c, t, b in zip(budgets, own, base_time):
            if math.isfinite(t) and math.isfinite(b) and t > 0:
                rows.append({"family": name, cost: c, time: t, "baseline_time_s": b, "speedup": b / t})
    table = pd.DataFrame(rows, columns=["family", cost, time, "baseline_time_s", "speedup"])
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    shown = table[np.isfinite(table["speedup"])]
    for name, group in shown.groupby("family", sort=True):
        ax.step(group[cost], group["speedup"], where="post", marker="o", label=str(name))
    ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label=f"{baseline} (baseline)")
    ax.set_xlabel(_unit_label("network cost", "US$"))
    ax.set_ylabel(f"speedup over best {baseline} at equal cost")
    _log_if_wide(ax.set_xscale, shown[cost])
    ax.set_title(_titled(f"Speedup over {baseline} at equal cost budget", model))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="best", fontsize=9)
    if shown.empty:
        ax.text(0.5, 0.5, f"no cost budget where both {baseline} and another family have a point",
                ha="center", va="center", transform=ax.transAxes)
    _save(fig, path)
    return table


def time_heatmap(frame, path, x, y, value="iteration_time_s", x_labels=None, y_labels=None, model=None,
                 unit=None):
    """Heatmap of the best (smallest) `value` over every other axis, for each (x, y) pair of axis
    values among evaluated points. `x`/`y` are column names; their categories (or sorted values)
    give the order. `unit` is `value`'s unit (``Results.units[value]``; none shown when not given).
    Returns the table (rows: y values, columns: x values)."""
    unit = "" if unit is None else unit
    evaluated = frame[(frame["status"] == 0) & np.isfinite(frame[value])]
    evaluated = evaluated[evaluated[x].notna() & evaluated[y].notna()]
    table = evaluated.groupby([y, x], observed=True)[value].min().unstack(x)
    x_order = x_labels if x_labels is not None else _order(frame[x])
    y_order = y_labels if y_labels is not None else _order(frame[y])
    table = table.reindex(index=[v for v in y_order if v in set(table.index)],
                          columns=[v for v in x_order if v in set(table.columns)])
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    if table.size:
        data = table.to_numpy(dtype=float)
        image = ax.imshow(data, origin="lower", aspect="auto", cmap="viridis_r")
        colourbar = fig.colorbar(image, ax=ax)
        colourbar.set_label(_unit_label(f"best {value}", unit))
        ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns], rotation=45, ha="right")
        ax.set_yticks(range(len(table.index)), [str(i) for i in table.index])
        if data.size <= 120:
            finite = data[np.isfinite(data)]
            middle = (finite.min() + finite.max()) / 2 if finite.size else 0
            for (r, c), v in np.ndenumerate(data):
                if math.isfinite(v):
                    ax.text(c, r, u.format_quantity(v, unit, 4), ha="center", va="center",
                            fontsize=8, color="white" if v > middle else "black")
    else:
        ax.text(0.5, 0.5, "no evaluated points", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(_titled(f"Best {value} over all other axes", model))
    fig.subplots_adjust(bottom=0.2)
    _save(fig, path)
    return table


def _order(series):
    if isinstance(series.dtype, pd.CategoricalDtype):
        return list(series.cat.categories)
    return sorted(series.dropna().unique())


def convergence(optimize_output, path, time="iteration_time_s"):
    """The alternating optimizer's convergence from `toposweep optimize --target alternating --json`
    output (a dict with `rounds`): iteration time per round, the best so far, and the baseline.
    Returns a DataFrame (round, iteration_time_s, best_so_far_s)."""
    rounds = optimize_output.get("rounds", [])
    times = [float(r.get(time, math.nan)) for r in rounds]
    numbers = [int(r.get("round", i + 1)) for i, r in enumerate(rounds)]
    best = np.fmin.accumulate(np.array(times, dtype=float)) if times else np.array([])
    table = pd.DataFrame({"round": numbers, time: times, "best_so_far_s": best})
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(table["round"], table[time], marker="o", label="round result")
    ax.step(table["round"], table["best_so_far_s"], where="post", linewidth=2, label="best so far")
    baseline = optimize_output.get("baseline_iteration_time_s")
    if baseline is not None:
        ax.axhline(float(baseline), color="black", linestyle="--", linewidth=1,
                   label=f"baseline ({u.format_quantity(float(baseline), 's')})")
    ax.set_xlabel("round of the alternating optimization")
    ax.set_ylabel(_unit_label("iteration time", "s"))
    ax.set_title("Alternating topology/strategy optimization: convergence")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=9)
    _save(fig, path)
    return table


def png_size(path):
    """(width, height) in pixels from a PNG's IHDR chunk; ValueError if it is not a PNG."""
    with open(path, "rb") as f:
        header = f.read(24)
    if len(header) < 24 or header[:8] != b"\x89PNG\r\n\x1a\n" or header[12:16] != b"IHDR":
        raise ValueError(f"{path}: not a PNG file")
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
