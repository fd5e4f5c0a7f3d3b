"""The report's numbers against values computed here directly from the HDF5 file with h5py and
plain Python loops (no pandas, no analysis code), and its figures against their promised size."""

import csv
import json
import math
import os
import subprocess
import sys

import h5py
import matplotlib.image
import numpy as np
import pytest

from analysis import frontier as fr_frontier
from analysis import load_results, report
from analysis.plots import png_size, time_heatmap, convergence

import schema_helpers  # tests/analysis, on the path through conftest.py

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIGURE_SIZE = (1000, 700)  # pixels, as docs/analysis.md promises
MISSING = 4294967295


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def direct_rows(path):
    """Rows of /points as dicts with decoded axis labels and a family, read with h5py only."""
    with h5py.File(path, "r") as f:
        points = f["points"][()]
        axes = [a for a in text(f["space"].attrs["axes"]).split(",") if a]
        labels = {a: [text(v) for v in f[f"space/axes/{a}/values"][()]] for a in axes}
        subspaces = [text(s) for s in f["space/subspaces"][()]]
    rows = []
    for p in points:
        row = {"index": int(p["index"]), "status": int(p["status"]), "cost": float(p["cost_usd"]),
               "time": float(p["iteration_time_s"]), "subspace": subspaces[int(p["subspace"])]}
        for a in axes:
            row[a] = None if int(p[a]) == MISSING else labels[a][int(p[a])]
        row["family"] = row.get("topology.kind") or row["subspace"]
        rows.append(row)
    return rows


def ok(row):
    return row["status"] == 0 and math.isfinite(row["cost"]) and math.isfinite(row["time"])


def dominated(p, rows):
    return any(q["cost"] <= p["cost"] and q["time"] <= p["time"] and (q["cost"] < p["cost"] or q["time"] < p["time"])
               for q in rows)


def best_at(rows, budget):
    times = [r["time"] for r in rows if r["cost"] <= budget]
    return min(times) if times else math.nan


def expected_summary(rows, baseline):
    families = sorted({r["family"] for r in rows})
    budgets = sorted({r["cost"] for r in rows if ok(r)})
    out = {}
    for name in families + ["(all)"]:
        group = rows if name == "(all)" else [r for r in rows if r["family"] == name]
        good = [r for r in group if ok(r)]
        fastest = min(good, key=lambda r: (r["time"], r["cost"], r["index"]))
        cheapest = min(good, key=lambda r: (r["cost"], r["time"], r["index"]))
        speedups = []
        if name not in ("(all)", baseline):
            base = [r for r in rows if ok(r) and r["family"] == baseline]
            for c in budgets:  # the ratio of two staircases only changes at point costs
                mine, theirs = best_at(good, c), best_at(base, c)
                if math.isfinite(mine) and math.isfinite(theirs):
                    speedups.append(theirs / mine)
        out[name] = {
            "points": len(group),
            "evaluated": sum(r["status"] == 0 for r in group),
            "infeasible": sum(r["status"] == 1 for r in group),
            "failed": sum(r["status"] == 2 for r in group),
            "frontier_points": sum(not dominated(p, good) for p in good),
            "best_iteration_time_s": fastest["time"], "best_time_cost_usd": fastest["cost"],
            "best_time_index": fastest["index"],
            "min_cost_usd": cheapest["cost"], "min_cost_iteration_time_s": cheapest["time"],
            "min_cost_index": cheapest["index"],
            "max_speedup": max(speedups) if speedups else math.nan,
        }
    return out


@pytest.fixture(scope="module", params=["schema", "sweep"])
def written_report(request, tmp_path_factory):
    """One report per results file, shared by the tests that read it."""
    path = request.getfixturevalue("schema_path" if request.param == "schema" else "sweep_file")
    out = tmp_path_factory.mktemp("report") / "report"
    done = report.write_report(path, str(out))
    return path, out, done


def test_summary_csv_matches_values_computed_from_the_hdf5(written_report):
    path, out, done = written_report
    rows = direct_rows(path)
    baseline = "fattree"
    assert any(n.startswith("speedups are over the best fattree") for n in done["notes"])
    expected = expected_summary(rows, baseline)
    with open(out / "summary.csv", newline="") as f:
        got = {r["family"]: r for r in csv.DictReader(f)}
    assert set(got) == set(expected)
    for family, values in expected.items():
        for column, value in values.items():
            cell = got[family][column]
            if isinstance(value, int):
                assert int(cell) == value, (family, column)
            elif math.isnan(value):
                assert cell == "", (family, column)
            else:
                assert float(cell) == pytest.approx(value, rel=1e-12), (family, column)


def test_python_frontier_equals_the_files_frontier_and_the_definition(written_report):
    path, out, done = written_report
    rows = [r for r in direct_rows(path) if ok(r)]
    definition = sorted(p["index"] for p in rows if not dominated(p, rows))
    with h5py.File(path, "r") as f:
        stored = sorted(int(i) for i in f["frontier"][()])
        assert text(f["frontier"].attrs["objectives"]) == "cost_usd,iteration_time_s"
    with open(out / "frontier.csv", newline="") as f:
        reader = csv.DictReader(f)
        in_csv = sorted(int(r["index"]) for r in reader)
        # The strategy each frontier row simulated, as far as the file records it (context and
        # expert degrees since toposweep wrote them).
        with h5py.File(path, "r") as h5:
            recorded = [c for c in ("dp", "tp", "pp", "cp", "ep", "etp", "microbatches")
                        if c in h5["points"].dtype.names]
        assert set(recorded) <= set(reader.fieldnames), (recorded, reader.fieldnames)
    assert in_csv == definition
    by_family = {}
    for p in rows:
        if not dominated(p, [q for q in rows if q["family"] == p["family"]]):
            by_family.setdefault(p["family"], []).append(p["index"])
    with open(out / "frontier_by_family.csv", newline="") as f:
        got = {}
        for r in csv.DictReader(f):
            got.setdefault(r["family"], []).append(int(r["index"]))
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in by_family.items()}
    assert stored == definition
    assert any("equals the frontier computed here" in n for n in done["notes"])


def test_every_figure_is_a_non_empty_png_of_the_promised_size(written_report):
    _, out, done = written_report
    assert set(done["figures"]) == {"cost_vs_time", "speedup", "heatmap"}
    for name, path in done["figures"].items():
        assert os.path.getsize(path) > 10_000, name
        assert png_size(path) == FIGURE_SIZE, name
        pixels = matplotlib.image.imread(path)
        assert pixels.shape[:2] == (FIGURE_SIZE[1], FIGURE_SIZE[0])
        assert float(np.std(pixels[..., :3])) > 0.05, f"{name} looks blank"
        assert f"({os.path.basename(path)})" in (out / "summary.md").read_text()


def test_axes_are_decoded_to_labels_and_si_values(results_file):
    results = load_results(results_file)
    rows = direct_rows(results_file)
    frame = results.points
    for key in ("topology.kind", "topology.link_bandwidth", "topology.degree"):
        got = [None if isinstance(v, float) and math.isnan(v) else v for v in frame[key].astype(object)]
        assert got == [r[key] for r in rows], key
    # 100Gbps is 12.5e9 bytes/s; degree 4 is the plain number 4.
    bandwidth = frame[frame["topology.link_bandwidth"] == "100Gbps"]["topology.link_bandwidth_si"]
    assert len(bandwidth) > 0 and set(bandwidth) == {12.5e9}
    assert set(frame[frame["topology.degree"] == "4"]["topology.degree_si"]) == {4.0}
    assert results.units["topology.link_bandwidth_si"] == "B/s"
    assert results.units["iteration_time_s"] == "s"
    assert results.units["cost_usd"] == "USD"
    assert frame["family"].tolist() == [r["family"] for r in rows]


def _rewrite_points(path, add_field=None, units=None):
    """Rewrite /points of a results file: optionally with one more float64 field (name, value) and
    another `units` attribute (None keeps it, "" drops it)."""
    import numpy.lib.recfunctions as rfn
    with h5py.File(path, "r+") as f:
        table, attrs = f["points"][()], dict(f["points"].attrs)
        if add_field is not None:
            table = rfn.append_fields(table, add_field[0], np.full(len(table), add_field[1]), usemask=False)
        del f["points"]
        points = f.create_dataset("points", data=table, chunks=True)
        for k, v in attrs.items():
            if k != "units" or units is None:
                points.attrs[k] = v
        if units:
            points.attrs["units"] = units


def test_units_are_the_files_own_also_for_fields_the_package_never_heard_of(tmp_path):
    """A metric added to toposweep's table reaches the analysis through the file alone."""
    path = str(tmp_path / "more.h5")
    schema_helpers.write(path)
    _rewrite_points(path, add_field=("energy_j", 42.0),
                    units=schema_helpers.UNITS.replace("cost_usd=USD", "cost_usd=EUR") + ";energy_j=J")
    results = load_results(path)
    assert results.units["energy_j"] == "J"
    assert results.units["cost_usd"] == "EUR"  # the file's word, not a naming rule
    assert results.units["dp"] == "" and results.units["index"] == ""  # "1": a count
    assert set(results.points["energy_j"]) == {42.0}


@pytest.mark.parametrize("units, message", [
    ("", "no units attribute"),
    (schema_helpers.UNITS.replace("memory_per_gpu_bytes=B;", ""), "'memory_per_gpu_bytes' has no unit"),
])
def test_a_file_without_a_fields_unit_is_refused(tmp_path, units, message):
    path = str(tmp_path / "bad.h5")
    schema_helpers.write(path)
    _rewrite_points(path, units=units)
    with pytest.raises(ValueError, match=message):
        load_results(path)


def test_heatmap_cells_are_the_best_time_of_each_axis_pair(results_file, tmp_path):
    results = load_results(results_file)
    table = time_heatmap(results.points, str(tmp_path / "h.png"), "topology.link_bandwidth", "topology.degree")
    rows = [r for r in direct_rows(results_file) if ok(r)]
    cells = {}
    for r in rows:
        if r["topology.link_bandwidth"] is not None and r["topology.degree"] is not None:
            key = (r["topology.degree"], r["topology.link_bandwidth"])
            cells[key] = min(cells.get(key, math.inf), r["time"])
    assert cells, "the fixture must sweep degree x link bandwidth"
    for (degree, bandwidth), best in cells.items():
        assert table.loc[degree, bandwidth] == pytest.approx(best, rel=1e-12)
    assert table.notna().sum().sum() == len(cells)


def test_convergence_tracks_the_best_round_so_far(tmp_path):
    output = {"iteration_time_s": 1.2, "baseline_iteration_time_s": 2.5,
              "rounds": [{"iteration_time_s": t} for t in (2.0, 1.5, 1.7, 1.2, 1.2)]}
    table = convergence(output, str(tmp_path / "c.png"))
    assert table["round"].tolist() == [1, 2, 3, 4, 5]
    assert table["best_so_far_s"].tolist() == [2.0, 1.5, 1.5, 1.2, 1.2]
    assert png_size(tmp_path / "c.png") == FIGURE_SIZE


def run_report(*args):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "analysis.report", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def test_command_line_writes_the_report_with_a_convergence_figure(schema_path, tmp_path):
    optimize = tmp_path / "optimize.json"
    optimize.write_text(json.dumps({"rounds": [{"iteration_time_s": 3.0}, {"iteration_time_s": 2.0}]}))
    done = run_report(schema_path, "--out", str(tmp_path / "r"), "--optimize", str(optimize))
    assert done.returncode == 0, done.stderr
    for name in ("summary.md", "summary.csv", "frontier.csv", "frontier_by_family.csv", "cost_vs_time.png",
                 "speedup.png", "heatmap.png", "convergence.png"):
        assert (tmp_path / "r" / name).is_file(), name
    assert png_size(tmp_path / "r" / "convergence.png") == FIGURE_SIZE


@pytest.mark.parametrize("args, message", [
    (["--baseline", "dragonfly"], "no such topology family"),
    (["--heatmap", "topology.colour,topology.degree"], "no axis"),
    (["--objectives", "cost_usd,happiness"], "unknown field"),
])
def test_command_line_bad_input_exits_2_with_one_line(schema_path, tmp_path, capsys, args, message):
    assert report.main([schema_path, "--out", str(tmp_path / "r"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_command_line_rejects_a_file_that_is_not_hdf5(tmp_path, capsys):
    bogus = tmp_path / "not.h5"
    bogus.write_text("hello")
    assert report.main([str(bogus), "--out", str(tmp_path / "r")]) == 2
    assert "cannot read results file" in capsys.readouterr().err


def test_convergence_figure_from_a_real_alternating_optimization(tmp_path):
    binary = os.environ.get("TOPOSWEEP_BINARY", "")
    if not binary or not os.access(binary, os.X_OK):
        pytest.skip(f"no toposweep binary (TOPOSWEEP_BINARY={binary!r})")
    command = [binary, "optimize", "--target", "alternating", "--json", "--set", "model.name=resnet50",
               "--set", "topology.kind=topoopt", "--set", "topology.servers=8", "--set", "topology.degree=4"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    (tmp_path / "optimize.json").write_text(done.stdout)
    table = convergence(output, str(tmp_path / "c.png"))
    times = [float(r["iteration_time_s"]) for r in output["rounds"]]
    assert len(table) == len(times) >= 1
    assert table["best_so_far_s"].tolist() == [min(times[:i + 1]) for i in range(len(times))]
    assert png_size(tmp_path / "c.png") == FIGURE_SIZE


def test_report_of_a_keep_frontier_file_says_it_holds_the_frontier_only(tmp_path):
    from conftest import run_sweep
    path = run_sweep(tmp_path / "frontier-only.h5", extra=("--keep", "frontier"))
    results = load_results(path)
    with h5py.File(path, "r") as f:
        stored = sorted(int(i) for i in f["points"]["index"])
        frontier_indices = sorted(int(i) for i in f["frontier"][()])
        size = int(f.attrs["space_size"])
    assert stored == frontier_indices and size > len(stored)
    assert not results.complete
    done = report.write_report(path, str(tmp_path / "r"))
    assert any(f"holds {len(stored)} of {size} points" in n for n in done["notes"])
    # Every stored point is on the frontier, so the frontier recomputed here is all of them.
    assert sorted(done["frontier"]["index"].tolist()) == stored


def test_heatmap_over_two_per_dimension_bandwidths(schema_path, tmp_path):
    done = report.write_report(schema_path, str(tmp_path / "r"),
                               heatmap="topology.dim_bandwidth[0]_si,topology.dim_bandwidth[1]_si")
    table = done["heatmap"]
    shown = {"100GB/s": "100 GB/s", "50GB/s": "50 GB/s", "75GB/s": "75 GB/s"}  # labels, by hand
    cells = {}
    for r in direct_rows(schema_path):
        if ok(r) and r["topology.dim_bandwidth"] is not None:
            first, second = (shown[v] for v in r["topology.dim_bandwidth"].split(","))
            cells[(second, first)] = min(cells.get((second, first), math.inf), r["time"])
    assert cells
    for (second, first), best in cells.items():
        assert table.loc[second, first] == pytest.approx(best, rel=1e-12)
    assert table.notna().sum().sum() == len(cells)
    # Value order, not the order the space lists them in.
    assert list(table.columns) == sorted(table.columns, key=lambda label: float(label.split()[0]))
    assert png_size(done["figures"]["heatmap"]) == FIGURE_SIZE


@pytest.mark.parametrize("objectives", ["cost_usd,iteration_time_s", "cost_usd,iteration_time_s,memory_per_gpu_bytes",
                                        "cost_usd,max:samples_per_s"])
def test_python_frontiers_per_family_equal_the_frontier_command(sweep_file, objectives):
    """The C++ `toposweep frontier --group-by` and this package compute frontiers independently."""
    binary = os.environ["TOPOSWEEP_BINARY"]
    done = subprocess.run([binary, "frontier", sweep_file, "--objectives", objectives, "--group-by", "topology.kind",
                           "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    cpp = {g["value"]: sorted(p["index"] for p in g["frontier"]) for g in json.loads(done.stdout)["groups"]}
    frame = load_results(sweep_file).points
    python = fr_frontier(frame, objectives, group_by="family")
    mine = {name: sorted(group["index"].tolist()) for name, group in python.groupby("family")}
    assert mine == cpp


def test_where_restricts_the_report_to_matching_points(schema_path, tmp_path):
    done = report.write_report(schema_path, str(tmp_path / "r"),
                               where=["topology.kind=topoopt", "topology.servers=16"])
    rows = [r for r in direct_rows(schema_path) if r["family"] == "topoopt" and r["topology.servers"] == "16"]
    expected = expected_summary(rows, baseline=None)
    with open(tmp_path / "r" / "summary.csv", newline="") as f:
        got = {r["family"]: r for r in csv.DictReader(f)}
    assert set(got) == {"topoopt", "(all)"}
    for column in ("points", "evaluated", "frontier_points", "best_time_index", "min_cost_index"):
        assert int(got["topoopt"][column]) == expected["topoopt"][column], column
    assert float(got["topoopt"]["best_iteration_time_s"]) == expected["topoopt"]["best_iteration_time_s"]
    assert any("only the 6 of 22 points" in n for n in done["notes"])


@pytest.mark.parametrize("condition, message", [("colour=red", "expected KEY=VALUE"),
                                                ("topology.kind=dragonfly", "no point left")])
def test_where_with_an_unknown_key_or_no_match_is_bad_input(schema_path, tmp_path, capsys, condition, message):
    assert report.main([schema_path, "--out", str(tmp_path / "r"), "--where", condition]) == 2
    assert message in capsys.readouterr().err


def test_where_uses_the_base_value_where_a_sub_space_does_not_sweep_the_key(schema_path, tmp_path):
    # The fixture's base configuration sets topology.servers = 16; no point lacks the axis, but
    # model.name is only in the base: every point has model.name = bert-large.
    done = report.write_report(schema_path, str(tmp_path / "r"), where=["model.name=bert-large"])
    assert any("only the 22 of 22 points" in n for n in done["notes"])


TWO_MODELS = """[server]
gpus = 2
[topology]
servers = 4
kind = switch
degree = 1
[space.pair]
model.name = ncf, resnet50
topology.link_bandwidth = 25Gbps, 100Gbps
strategy = all(max_tp=1, max_pp=2)
"""


def test_a_space_of_several_models_gets_a_summary_and_figures_per_model(tmp_path):
    space = tmp_path / "two_models.ini"
    space.write_text(TWO_MODELS)
    from conftest import run_sweep
    path = run_sweep(tmp_path / "two.h5", space=str(space))
    done = report.write_report(path, str(tmp_path / "r"))
    rows = direct_rows(path)
    with open(tmp_path / "r" / "summary_by_model.csv", newline="") as f:
        got = {r["model"]: r for r in csv.DictReader(f)}
    assert set(got) == {"ncf", "resnet50"}  # no row pooling the two models
    for model in ("ncf", "resnet50"):
        mine = [r for r in rows if r["model.name"] == model]
        evaluated = [r for r in mine if r["status"] == 0]
        assert int(got[model]["points"]) == len(mine)
        assert int(got[model]["evaluated"]) == len(evaluated)
        assert float(got[model]["best_iteration_time_s"]) == min(r["time"] for r in evaluated)
        assert float(got[model]["min_cost_usd"]) == min(r["cost"] for r in evaluated)
        assert os.path.isfile(tmp_path / "r" / f"cost_vs_time_{model}.png")
    assert not (tmp_path / "r" / "cost_vs_time.png").exists()
    text_md = (tmp_path / "r" / "summary.md").read_text()
    assert "## Model ncf" in text_md and "## Model resnet50" in text_md
    assert "ncf (4 points), resnet50 (4 points)" in text_md
    assert any("equals the union of the per-model frontiers" in n for n in done["notes"])


# ---- a file of two models where one dominates the other (schema_helpers.write_models)

def model_rows(path):
    """direct_rows with each row's model: its model.name axis value, else the base's (read with h5py)."""
    with h5py.File(path, "r") as f:
        base = [line.split("=", 1)[1].strip() for line in text(f.attrs["config"]).splitlines()
                if line.startswith("name")][0]
    rows = direct_rows(path)
    for r in rows:
        r["model"] = r.get("model.name") or base
    return rows


@pytest.fixture(scope="module")
def models_path(tmp_path_factory):
    import schema_helpers
    path = tmp_path_factory.mktemp("models") / "models.h5"
    schema_helpers.write_models(str(path))
    return str(path)


@pytest.fixture(scope="module")
def models_report(models_path, tmp_path_factory):
    out = tmp_path_factory.mktemp("models_report") / "r"
    return out, report.write_report(models_path, str(out))


def test_the_fixture_pooled_frontier_hides_a_model_entirely(models_path):
    rows = [r for r in model_rows(models_path) if ok(r)]
    pooled = [p for p in rows if not dominated(p, rows)]
    assert pooled and {p["model"] for p in pooled} == {"small"}
    assert {r["model"] for r in rows} == {"small", "large"}


def test_every_figure_is_per_model_and_none_pools_the_models(models_report):
    out, done = models_report
    names = {f"{figure}_{model}" for figure in ("cost_vs_time", "speedup", "heatmap") for model in ("large", "small")}
    assert set(done["figures"]) == names
    assert sorted(os.listdir(out)) == sorted([f"{n}.png" for n in names] + [
        "summary.md", "summary.csv", "summary_by_model.csv", "frontier.csv", "frontier_by_family.csv"])
    for name, path in done["figures"].items():
        assert path == str(out / f"{name}.png")
        assert png_size(path) == FIGURE_SIZE
        assert float(np.std(matplotlib.image.imread(path)[..., :3])) > 0.05, f"{name} looks blank"
    assert set(done["models"]) == {"large", "small"}
    assert done["speedups"] is None and done["heatmap"] is None


def test_frontier_csv_is_each_models_own_frontier(models_report, models_path):
    out, done = models_report
    rows = [r for r in model_rows(models_path) if ok(r)]
    expected = {(r["model"], r["index"]) for r in rows
                if not dominated(r, [q for q in rows if q["model"] == r["model"]])}
    assert {m for m, _ in expected} == {"small", "large"}
    with open(out / "frontier.csv", newline="") as f:
        got = {(r["model"], int(r["index"])) for r in csv.DictReader(f)}
    assert got == expected
    with open(out / "frontier_by_family.csv", newline="") as f:
        got = {(r["model"], r["family"], int(r["index"])) for r in csv.DictReader(f)}
    assert got == {(r["model"], r["family"], r["index"]) for r in rows
                   if not dominated(r, [q for q in rows if (q["model"], q["family"]) == (r["model"], r["family"])])}
    assert any("the file's /frontier" in n and "equals the union of the per-model frontiers" in n
               for n in done["notes"])


def test_summary_rows_speedups_and_heatmaps_use_one_models_points_only(models_report, models_path):
    out, done = models_report
    rows = model_rows(models_path)
    with open(out / "summary.csv", newline="") as f:
        got = {(r["model"], r["family"]): r for r in csv.DictReader(f)}
    assert set(got) == {(m, fam) for m in ("large", "small") for fam in ("fattree", "topoopt", "(all)")}
    for model in ("large", "small"):
        mine = [r for r in rows if r["model"] == model]
        for family, values in expected_summary(mine, "fattree").items():
            for column, value in values.items():
                cell = got[(model, family)][column]
                if isinstance(value, int):
                    assert int(cell) == value, (model, family, column)
                elif math.isnan(value):
                    assert cell == "", (model, family, column)
                else:
                    assert float(cell) == pytest.approx(value, rel=1e-12), (model, family, column)
        # Heatmap cells: the best time of this model's points at each (degree, bandwidth).
        cells = {}
        for r in mine:
            if ok(r):
                key = (r["topology.degree"], r["topology.link_bandwidth"])
                cells[key] = min(cells.get(key, math.inf), r["time"])
        table = done["models"][model]["heatmap"]
        assert table.notna().sum().sum() == len(cells)
        for (degree, bandwidth), best in cells.items():
            assert table.loc[degree, bandwidth] == pytest.approx(best, rel=1e-12)
    with open(out / "summary_by_model.csv", newline="") as f:
        by_model = {r["model"]: r for r in csv.DictReader(f)}
    assert set(by_model) == {"large", "small"}
    assert int(by_model["large"]["points"]) == 8 and int(by_model["small"]["points"]) == 8
    md = (out / "summary.md").read_text()
    assert "- models: large (8 points), small (8 points)" in md
    assert "## Model large" in md and "## Model small" in md
    assert "(heatmap_large.png)" in md and "(cost_vs_time_small.png)" in md


def test_pool_models_draws_pooled_figures_on_request(models_path, tmp_path):
    assert report.main([models_path, "--out", str(tmp_path / "r"), "--pool-models"]) == 0
    files = set(os.listdir(tmp_path / "r"))
    assert {"cost_vs_time.png", "speedup.png", "heatmap.png"} <= files
    assert not any(name.endswith(("_large.png", "_small.png")) for name in files)
    md = (tmp_path / "r" / "summary.md").read_text()
    assert "pooled on request (--pool-models)" in md
    # The file's /frontier is per model, the report's pooled: not compared, and said so.
    assert "/frontier is grouped by model.name, this report by none: not compared" in md
    with open(tmp_path / "r" / "frontier.csv", newline="") as f:
        indices = {r["index"] for r in csv.DictReader(f)}
    rows = [r for r in model_rows(models_path) if ok(r)]
    assert indices == {str(p["index"]) for p in rows if not dominated(p, rows)}


def test_one_model_reports_keep_their_file_names_and_say_which_model(written_report):
    _, out, done = written_report
    assert done["models"] is None
    assert not (out / "summary_by_model.csv").exists()
    assert "- model: bert-large (" in (out / "summary.md").read_text()
