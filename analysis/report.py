"""Write a report of a sweep: figures (PNG), a summary table (markdown and CSV) and the frontier.

    /usr/bin/python3 -m analysis.report results.h5 --out report/ \\
        [--baseline FAMILY] [--heatmap X,Y] [--optimize optimize.json] [--objectives A,B]
        [--where KEY=VALUE ...]

Writes into --out: summary.md, summary.csv, frontier.csv, frontier_by_family.csv, cost_vs_time.png,
speedup.png (when there are at least two topology families), heatmap.png (when two axes are swept),
convergence.png (with --optimize). Exit status: 0 done, 2 bad input (unreadable file, unknown axis,
family or objective).
"""

import argparse
import json
import math
import os
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


def frontier_agreement(results, objectives):
    """Compare the Python frontier with the file's /frontier when they are for the same objectives.
    Returns (python_indices, message)."""
    python = fr.frontier(results.points, objectives)
    indices = np.sort(python["index"].to_numpy(dtype=np.uint64))
    if [o.strip() for o in objectives] != results.objectives:
        return indices, (f"/frontier is for {','.join(results.objectives) or 'no objectives'}; "
                         f"not compared with the {','.join(objectives)} frontier")
    stored = np.sort(results.frontier)
    if np.array_equal(indices, stored):
        return indices, f"the file's /frontier ({len(stored)} points) equals the frontier computed here"
    only_here = sorted(set(indices.tolist()) - set(stored.tolist()))
    only_file = sorted(set(stored.tolist()) - set(indices.tolist()))
    return indices, (f"MISMATCH: /frontier has {len(stored)} points, this analysis {len(indices)}; "
                     f"only here: {only_here[:10]}, only in the file: {only_file[:10]}")


def select_points(results, where):
    """Keep only the points whose column KEY shows VALUE, for each "KEY=VALUE" in `where` (an axis
    value as written in the space file, a family, a sub-space, or a strategy field). Where a point's
    sub-space does not sweep KEY, the base configuration's value counts."""
    frame = results.points
    for condition in where or []:
        key, sep, value = condition.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or (key not in frame and key not in results.config):
            raise BadInput(f"--where {condition}: expected KEY=VALUE with KEY a column or configuration key "
                           f"(axes: {', '.join(a.key for a in results.axes)}, family, subspace, dp, tp, pp, ...)")
        shown = frame[key].astype(object) if key in frame else pd.Series(None, index=frame.index, dtype=object)
        if key in results.config:  # a point whose sub-space does not sweep KEY has the base value
            shown = shown.where(shown.notna(), results.config[key])
        frame = frame[shown.astype(str) == value]
        if frame.empty:
            raise BadInput(f"--where {condition}: no point left")
    results.points = frame.reset_index(drop=True)
    return results


def write_report(path, out, baseline=None, heatmap=None, optimize=None, objectives="cost_usd,iteration_time_s",
                 where=None):
    """Write the report of results file `path` into directory `out`, over the points that pass the
    `where` conditions ("KEY=VALUE"). Returns a dict: figures (name -> path), summary, frontier,
    speedups and heatmap (DataFrames; None when not drawn) and notes (list of strings)."""
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
    figures, notes = {}, []
    if where:
        notes.append(f"only the {len(frame)} of {stored} points with {' and '.join(where)}")
    if not results.complete:
        notes.append(f"/points holds {len(frame)} of {results.space_size} points (--keep frontier): "
                     "counts cover the stored points only")

    figures["cost_vs_time"] = os.path.join(out, "cost_vs_time.png")
    plots.cost_vs_time(frame, figures["cost_vs_time"])

    speedups = heatmap_table = None
    base = choose_baseline(frame["family"], baseline)
    if base is None:
        notes.append("one topology family only: no speedup figure")
    else:
        figures["speedup"] = os.path.join(out, "speedup.png")
        speedups = plots.speedup_at_equal_cost(frame, figures["speedup"], base)
        notes.append(f"speedups are over the best {base} point of equal or lower cost")

    pair = choose_heatmap_axes(results, heatmap)
    if pair is None:
        notes.append("fewer than two swept axes: no heatmap")
    else:
        figures["heatmap"] = os.path.join(out, "heatmap.png")
        heatmap_table = plots.time_heatmap(frame, figures["heatmap"], pair[0], pair[1])
        notes.append(f"heatmap: best iteration time over {pair[0]} x {pair[1]}")

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

    table = sm.summary_table(frame, speedups)
    table.to_csv(os.path.join(out, "summary.csv"), index=False)
    # A space that sweeps several models pools them in the per-family rows; summarise each apart.
    model_table = None
    if "model.name" in frame:
        models = frame["model.name"].astype(object)
        if "model.name" in results.config:
            models = models.where(models.notna(), results.config["model.name"])
        names = sorted(str(m) for m in models.dropna().unique())
        if len(names) > 1:
            model_table = sm.summary_table(frame.assign(model_group=models.astype(str)), None,
                                           family="model_group")
            model_table.rename(columns={"family": "model"}).to_csv(
                os.path.join(out, "summary_by_model.csv"), index=False)
            notes.append(f"the points span {len(names)} models ({', '.join(names)}): the per-family rows pool "
                         "them; see the per-model summary, or report on one with --where model.name=NAME")
    if where:
        front_indices = fr.frontier(frame, objective_list)["index"].to_numpy()
        notes.append("/frontier covers every point, so it is not compared with this selection's frontier")
    else:
        front_indices, agreement = frontier_agreement(results, objective_list)
        notes.append(agreement)
    front = fr.frontier(frame, objective_list)
    columns = ["index", "family", "subspace"] + [a.key for a in results.axes] + \
        [c for c in ["iteration_time_s", "cost_usd", "dp", "tp", "pp", "microbatches"] if c in frame]
    columns = list(dict.fromkeys(c for c in columns + [n for n, _ in fr.parse_objectives(objective_list)]
                                 if c in front))
    front[columns].to_csv(os.path.join(out, "frontier.csv"), index=False)
    fr.frontier(frame, objective_list, group_by="family")[columns].to_csv(
        os.path.join(out, "frontier_by_family.csv"), index=False)

    with open(os.path.join(out, "summary.md"), "w", encoding="utf-8") as f:
        f.write(_markdown(results, table, figures, notes, objective_list, len(front_indices), out, model_table))
    return {"figures": figures, "summary": table, "frontier": front, "notes": notes, "speedups": speedups,
            "heatmap": heatmap_table, "summary_by_model": model_table}


def _markdown(results, table, figures, notes, objectives, frontier_size, out, model_table=None):
    attrs = results.attrs
    lines = [f"# Sweep report: {os.path.basename(results.path)}", "",
             f"- file: `{results.path}`",
             f"- toposweep {attrs.get('toposweep_version', '?')} (git {attrs.get('git_revision', '?')}), "
             f"created {attrs.get('created_utc', '?')}",
             f"- space: {results.space_size} points in {len(results.subspaces)} sub-space(s) "
             f"({', '.join(results.subspaces)}); axes: {', '.join(a.key for a in results.axes)}",
             f"- Pareto frontier of {', '.join(objectives)}: {frontier_size} points (frontier.csv; "
             "each topology family's own in frontier_by_family.csv)", "",
             "## Summary per topology family", "", sm.to_markdown(table),
             "Full-precision values (SI units: s, US$) are in summary.csv.", ""]
    if model_table is not None:
        lines += ["## Summary per model", "", sm.to_markdown(model_table, "model"),
                  "Full-precision values are in summary_by_model.csv.", ""]
    lines += ["## Notes", ""]
    lines += [f"- {n}" for n in notes]
    lines += ["", "## Figures", ""]
    for name, path in figures.items():
        lines += [f"### {name}", "", f"![{name}]({os.path.relpath(path, out)})", ""]
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
    args = parser.parse_args(argv)
    try:
        report = write_report(args.results, args.out, args.baseline, args.heatmap, args.optimize, args.objectives,
                              args.where)
    except BadInput as error:
        print(f"analysis.report: error: {error}", file=sys.stderr)
        return 2
    for name, path in report["figures"].items():
        print(f"{name}: {path}")
    print(f"summary: {os.path.join(args.out, 'summary.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
