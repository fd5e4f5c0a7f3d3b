"""Write a report of a sweep: figures (PNG), a summary table (markdown and CSV) and the frontier.

    /usr/bin/python3 -m analysis.report results.h5 --out report/ \\
        [--baseline FAMILY] [--heatmap X,Y] [--optimize optimize.json] [--objectives A,B]
        [--where KEY=VALUE ...] [--pool-models]

Writes into --out: summary.md, summary.csv, frontier.csv, frontier_by_family.csv, cost_vs_time.png,
speedup.png (when there are at least two topology families), heatmap.png (when two axes are swept),
convergence.png (with --optimize). When the points span several models, every figure is drawn per
model (cost_vs_time_<model>.png, ...), frontiers and summary rows are per model (a `model` column)
and summary_by_model.csv has one row per model; --pool-models puts the models together instead.
Exit status: 0 done, 2 bad input (unreadable file, unknown axis, family or objective).
"""

import argparse
import dataclasses
import json
import math
import os
import re
import sys

import numpy as np
import pandas as pd

from . import pareto as fr
from . import plots
from . import summary as sm
from . import units as u
from .results import load_results

BASELINE_PREFERENCE = ["fattree", "switch", "torus", "expander"]
HEATMAP_PREFERENCE = [("topology.link_bandwidth", "topology.degree"),
                      ("topology.link_bandwidth", "topology.servers")]


class BadInput(Exception):
    pass


def choose_baseline(families, requested=None):
    """The family speedups are measured against: `requested`, else the first of
    BASELINE_PREFERENCE present, else the first family by name. None with fewer than two families."""
    families = sorted(set(families))
    if requested is not None:
        if requested not in families:
            raise BadInput(f"--baseline {requested}: no such topology family (families: {', '.join(families)})")
        return requested
    if len(families) < 2:
        return None
    for name in BASELINE_PREFERENCE:
        if name in families:
            return name
    return families[0]


def _axis_column(results, key):
    """(column, ordered labels) to plot an axis key or a list-element column by."""
    frame = results.points
    if key in frame and key.endswith("_si"):
        unit = results.units.get(key, "")
        values = sorted(frame[key].dropna().unique())
        labels = {v: u.format_quantity(v, unit, 4) for v in values}
        name = key[:-3]
        frame[name] = pd.Categorical(frame[key].map(labels), categories=[labels[v] for v in values], ordered=True)
        return name
    if key not in frame:
        raise BadInput(f"--heatmap: no axis {key!r} (axes: {', '.join(a.key for a in results.axes)})")
    return key


def choose_heatmap_axes(results, requested=None):
    """Two axis columns for the heatmap: `requested` ("X,Y"), else a preferred pair that is swept,
    else the first two elements of a list-valued axis (per-dimension bandwidths), else the first two
    swept axes. None when fewer than two axes vary."""
    if requested:
        parts = [p.strip() for p in requested.split(",")]
        if len(parts) != 2:
            raise BadInput(f"--heatmap {requested}: expected two axes, X,Y")
        return tuple(_axis_column(results, p) for p in parts)
    swept = [a.key for a in results.swept_axes()]
    for x, y in HEATMAP_PREFERENCE:
        if x in swept and y in swept:
            return x, y
    frame = results.points
    for axis in results.axes:
        first, second = f"{axis.key}[0]_si", f"{axis.key}[1]_si"
        if first in frame and second in frame and frame[first].nunique() > 1 and frame[second].nunique() > 1:
            return _axis_column(results, first), _axis_column(results, second)
    if len(swept) >= 2:
        return swept[0], swept[1]
    return None


def frontier_agreement(results, objectives, per_model):
    """Compare the Python frontier (each model's own when `per_model`, else pooled) with the file's
    /frontier when both are for the same objectives and grouping. Returns (python_indices, message)."""
    python = fr.frontier(results.points, objectives, group_by="model" if per_model else None)
    indices = np.sort(python["index"].to_numpy(dtype=np.uint64))
    if [o.strip() for o in objectives] != results.objectives:
        return indices, (f"/frontier is for {','.join(results.objectives) or 'no objectives'}; "
                         f"not compared with the {','.join(objectives)} frontier")
    mine = "model.name" if per_model else "none"
    if len(results.models) > 1 and results.frontier_group_by != mine:
        return indices, (f"/frontier is grouped by {results.frontier_group_by}, this report by {mine}: "
                         "not compared")
    stored = np.sort(results.frontier)
    what = "the union of the per-model frontiers" if per_model else "the frontier"
    if np.array_equal(indices, stored):
        return indices, f"the file's /frontier ({len(stored)} points) equals {what} computed here"
    only_here = sorted(set(indices.tolist()) - set(stored.tolist()))
    only_file = sorted(set(stored.tolist()) - set(indices.tolist()))
    return indices, (f"MISMATCH: /frontier has {len(stored)} points, this analysis {len(indices)}; "
                     f"only here: {only_here[:10]}, only in the file: {only_file[:10]}")


def select_points(results, where):
    """Keep only the points whose column KEY shows VALUE, for each "KEY=VALUE" in `where` (an axis
    value as written in the space file, a family, a model, a sub-space, or a strategy field). Where
    a point's sub-space does not sweep KEY, the base configuration's value counts."""
    frame = results.points
    for condition in where or []:
        key, sep, value = condition.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or (key not in frame and key not in results.config):
            raise BadInput(f"--where {condition}: expected KEY=VALUE with KEY a column or configuration key "
                           f"(axes: {', '.join(a.key for a in results.axes)}, family, model, subspace, dp, tp, "
                           "pp, ...)")
        shown = frame[key].astype(object) if key in frame else pd.Series(None, index=frame.index, dtype=object)
        if key in results.config:  # a point whose sub-space does not sweep KEY has the base value
            shown = shown.where(shown.notna(), results.config[key])
        frame = frame[shown.astype(str) == value]
        if frame.empty:
            raise BadInput(f"--where {condition}: no point left")
    results.points = frame.reset_index(drop=True)
    return results


def model_slugs(models):
    """{model: file-name part}: the name with anything but letters, digits, '.', '-' and '_' made
    '_' (model.name may be a path to a model file), made unique."""
    slugs, taken = {}, set()
    for model in models:
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", str(model)).strip("_") or "model"
        slug, n = base, 2
        while slug in taken:
            slug, n = f"{base}_{n}", n + 1
        taken.add(slug)
        slugs[model] = slug
    return slugs


def _figures_of(results, out, suffix, model, baseline, heatmap):
    """The cost/time, speedup and heatmap figures of the points in `results` (one model, or every
    point when pooled), files named NAME{suffix}.png. Returns (figures, speedups, heatmap table,
    notes)."""
    frame = results.points
    figures, notes = {}, []
    prefix = f"{model}: " if model is not None else ""
    figures["cost_vs_time" + suffix] = os.path.join(out, f"cost_vs_time{suffix}.png")
    plots.cost_vs_time(frame, figures["cost_vs_time" + suffix], model=model)

    speedups = heatmap_table = None
    if baseline is not None and baseline not in set(frame["family"]):
        notes.append(f"{prefix}no {baseline} point: no speedup figure")
        base = None
    else:
        base = choose_baseline(frame["family"], baseline)
        if base is None:
            notes.append(f"{prefix}one topology family only: no speedup figure")
    if base is not None:
        figures["speedup" + suffix] = os.path.join(out, f"speedup{suffix}.png")
        speedups = plots.speedup_at_equal_cost(frame, figures["speedup" + suffix], base, model=model)
        notes.append(f"{prefix}speedups are over the best {base} point of equal or lower cost")

    pair = choose_heatmap_axes(results, heatmap)
    if pair is None:
        notes.append(f"{prefix}fewer than two swept axes: no heatmap")
    else:
        figures["heatmap" + suffix] = os.path.join(out, f"heatmap{suffix}.png")
        heatmap_table = plots.time_heatmap(results.points, figures["heatmap" + suffix], pair[0], pair[1],
                                           model=model, unit=results.units.get("iteration_time_s"))
        notes.append(f"{prefix}heatmap: best iteration time over {pair[0]} x {pair[1]}")
    return figures, speedups, heatmap_table, notes


def write_report(path, out, baseline=None, heatmap=None, optimize=None, objectives="cost_usd,iteration_time_s",
                 where=None, pool_models=False):
    """Write the report of results file `path` into directory `out`, over the points that pass the
    `where` conditions ("KEY=VALUE"). When the points span several models and `pool_models` is
    false, every figure, frontier and summary row is per model (figure files NAME_<model>.png).
    Returns a dict: figures (name -> path), summary and frontier (DataFrames, with a `model` column
    when per model), speedups and heatmap (DataFrames of a single-model or pooled report, else
    None), models ({model: {"points", "figures", "summary", "speedups", "heatmap"}} when per model,
    else None), summary_by_model (per model, else None) and notes (list of strings)."""
    try:
        results = load_results(path)
    except (OSError, ValueError, KeyError) as error:
        raise BadInput(f"cannot read results file {path}: {error}") from error
    objective_list = [o.strip() for o in objectives.split(",") if o.strip()]
    missing = [name for name, _ in fr.parse_objectives(objective_list) if name not in results.points]
    if missing:
        raise BadInput(f"--objectives: unknown field(s) {', '.join(missing)}")
    stored = len(results.points)
    select_points(results, where)
    os.makedirs(out, exist_ok=True)
    frame = results.points
    models = results.models
    per_model = len(models) > 1 and not pool_models
    if baseline is not None and baseline not in set(frame["family"]):
        families = sorted(set(frame["family"]))
        raise BadInput(f"--baseline {baseline}: no such topology family (families: {', '.join(families)})")
    figures, notes = {}, []
    if where:
        notes.append(f"only the {len(frame)} of {stored} points with {' and '.join(where)}")
    if not results.complete:
        notes.append(f"/points holds {len(frame)} of {results.space_size} points (--keep frontier): "
                     "counts cover the stored points only")
    if len(models) > 1 and pool_models:
        notes.append(f"--pool-models: the {len(models)} models share every frontier, speedup curve, heatmap "
                     "and summary row, so a point may be compared with a point of another model")

    by_model = model_table = None
    if per_model:
        by_model = {}
        slugs = model_slugs(models)
        for model in models:
            part = dataclasses.replace(results, points=frame[frame["model"] == model].reset_index(drop=True))
            own_figures, speedups, heatmap_table, own_notes = _figures_of(part, out, "_" + slugs[model], model,
                                                                          baseline, heatmap)
            figures.update(own_figures)
            notes += own_notes
            by_model[model] = {"points": part.points, "figures": own_figures, "speedups": speedups,
                               "heatmap": heatmap_table, "summary": sm.summary_table(part.points, speedups)}
        speedups = heatmap_table = None
        table = pd.concat([t["summary"].assign(model=m) for m, t in by_model.items()], ignore_index=True)
        table = table[["model"] + sm.COLUMNS]
        model_table = pd.concat([t["summary"][t["summary"]["family"] == sm.ALL].assign(family=m)
                                 for m, t in by_model.items()], ignore_index=True).rename(columns={"family": "model"})
        model_table.to_csv(os.path.join(out, "summary_by_model.csv"), index=False)
    else:
        own_figures, speedups, heatmap_table, own_notes = _figures_of(results, out, "", None, baseline, heatmap)
        figures.update(own_figures)
        notes += own_notes
        table = sm.summary_table(frame, speedups)

    if optimize is not None:
        try:
            with open(optimize, encoding="utf-8") as f:
                optimize_output = json.load(f)
        except (OSError, ValueError) as error:
            raise BadInput(f"--optimize {optimize}: {error}") from error
        if not isinstance(optimize_output, dict) or not isinstance(optimize_output.get("rounds"), list):
            raise BadInput(f"--optimize {optimize}: no 'rounds' array (expected the output of "
                           "'toposweep optimize --target alternating --json')")
        figures["convergence"] = os.path.join(out, "convergence.png")
        plots.convergence(optimize_output, figures["convergence"])

    table.to_csv(os.path.join(out, "summary.csv"), index=False)
    group = "model" if per_model else None
    front = fr.frontier(frame, objective_list, group_by=group)
    if where:
        notes.append("/frontier covers every point, so it is not compared with this selection's frontier")
    else:
        _, agreement = frontier_agreement(results, objective_list, per_model)
        notes.append(agreement)
    columns = ([group] if group else []) + ["index", "family", "subspace"] + [a.key for a in results.axes] + \
        [c for c in ["iteration_time_s", "cost_usd", "dp", "tp", "pp", "cp", "ep", "etp", "microbatches"] if c in frame]
    columns = list(dict.fromkeys(c for c in columns + [n for n, _ in fr.parse_objectives(objective_list)]
                                 if c in front))
    front[columns].to_csv(os.path.join(out, "frontier.csv"), index=False)
    if per_model:
        by_family = pd.concat([fr.frontier(frame[frame["model"] == m], objective_list, group_by="family")
                               for m in models])
    else:
        by_family = fr.frontier(frame, objective_list, group_by="family")
    by_family[columns].to_csv(os.path.join(out, "frontier_by_family.csv"), index=False)

    with open(os.path.join(out, "summary.md"), "w", encoding="utf-8") as f:
        f.write(_markdown(results, table, figures, notes, objective_list, len(front), out, by_model, pool_models))
    return {"figures": figures, "summary": table, "frontier": front, "notes": notes, "speedups": speedups,
            "heatmap": heatmap_table, "models": by_model, "summary_by_model": model_table}


def _figure_lines(figures, out):
    lines = []
    for name, path in figures.items():
        lines += [f"### {name}", "", f"![{name}]({os.path.relpath(path, out)})", ""]
    return lines


def _markdown(results, table, figures, notes, objectives, frontier_size, out, by_model, pool_models):
    attrs = results.attrs
    counts = results.points["model"].value_counts()
    models = results.models
    listed = ", ".join(f"{m or '(unknown)'} ({int(counts[m])} points)" for m in models)
    if len(models) > 1:
        listed += " — pooled on request (--pool-models)" if pool_models else " — each reported on its own"
    if by_model is not None:
        frontier_line = (f"- Pareto frontier of {', '.join(objectives)}: one per model, {frontier_size} points in "
                         "all (frontier.csv, column `model`; each model's topology families' own in "
                         "frontier_by_family.csv)")
    else:
        frontier_line = (f"- Pareto frontier of {', '.join(objectives)}: {frontier_size} points (frontier.csv; "
                         "each topology family's own in frontier_by_family.csv)")
    lines = [f"# Sweep report: {os.path.basename(results.path)}", "",
             f"- file: `{results.path}`",
             f"- toposweep {attrs.get('toposweep_version', '?')} (git {attrs.get('git_revision', '?')}), "
             f"created {attrs.get('created_utc', '?')}",
             f"- space: {results.space_size} points in {len(results.subspaces)} sub-space(s) "
             f"({', '.join(results.subspaces)}); axes: {', '.join(a.key for a in results.axes)}",
             f"- {'models' if len(models) > 1 else 'model'}: {listed}",
             frontier_line, ""]
    if by_model is None:
        lines += ["## Summary per topology family", "", sm.to_markdown(table),
                  "Full-precision values (SI units: s, US$) are in summary.csv.", ""]
    else:
        lines += ["Iteration times of different models are not alternatives to each other, so each model has "
                  "its own summary, frontiers and figures below (summary_by_model.csv: one row per model).", ""]
    lines += ["## Notes", ""]
    lines += [f"- {n}" for n in notes]
    lines += [""]
    if by_model is None:
        lines += ["## Figures", ""] + _figure_lines(figures, out)
        return "\n".join(lines)
    for model, part in by_model.items():
        lines += [f"## Model {model}", "", f"{len(part['points'])} points.", "",
                  sm.to_markdown(part["summary"]),
                  "Full-precision values (SI units: s, US$) are in summary.csv (column `model`).", ""]
        lines += _figure_lines(part["figures"], out)
    shown = {name for part in by_model.values() for name in part["figures"]}
    rest = {name: path for name, path in figures.items() if name not in shown}
    if rest:
        lines += ["## Other figures", ""] + _figure_lines(rest, out)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m analysis.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="results file written by 'toposweep sweep'")
    parser.add_argument("--out", required=True, help="directory for the report (created if missing)")
    parser.add_argument("--baseline", help="topology family speedups are measured against "
                        f"(default: first present of {', '.join(BASELINE_PREFERENCE)})")
    parser.add_argument("--heatmap", help="two axes X,Y for the heatmap (an axis key, or KEY[i]_si for "
                        "element i of a list-valued axis)")
    parser.add_argument("--optimize", help="output of 'toposweep optimize --target alternating --json' "
                        "for the convergence figure")
    parser.add_argument("--objectives", default="cost_usd,iteration_time_s",
                        help="objectives of the frontier (max:FIELD for a maximised one)")
    parser.add_argument("--where", action="append", metavar="KEY=VALUE",
                        help="report only on the points whose KEY shows VALUE, e.g. model.name=bert-large "
                        "(repeatable: all must hold)")
    parser.add_argument("--pool-models", action="store_true",
                        help="when the points span several models, put them on the same frontiers, speedup "
                        "curves and heatmaps (default: every figure and frontier per model)")
    args = parser.parse_args(argv)
    try:
        report = write_report(args.results, args.out, args.baseline, args.heatmap, args.optimize, args.objectives,
                              args.where, args.pool_models)
    except BadInput as error:
        print(f"analysis.report: error: {error}", file=sys.stderr)
        return 2
    for name, path in report["figures"].items():
        print(f"{name}: {path}")
    print(f"summary: {os.path.join(args.out, 'summary.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
