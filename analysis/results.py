"""Load a toposweep results file (docs/hdf5-schema.md) into a pandas DataFrame with decoded axes.

Columns of ``Results.points``:
  * every field of ``/points`` except the axis positions, with their file types (``index``,
    ``status``, ``iteration_time_s``, ``cost_usd``, ``dp``, ...);
  * ``subspace``: the sub-space name (ordered categorical);
  * one column per swept axis, named by its key (``topology.degree``), holding the value as written
    in the space file (an ordered categorical: by value for numeric axes, else in the space's order;
    missing where the point's sub-space does not sweep that axis);
  * ``<key>_si``: the axis value in SI units (float) when every value is a number or a quantity;
  * ``<key>[i]_si``: element i of a list-valued axis (``topology.dim_bandwidth = 100GB/s,50GB/s``);
  * ``family``: the topology family (``topology.kind`` of the point, else its sub-space name);
  * ``model``: the model the point trains (its ``model.name`` axis value, else the base
    configuration's ``model.name``; "" when neither is known).
``Results.units`` maps every numeric column to its unit (``s``, ``B``, ``B/s``, ``USD``, ``1/s`` or ``""``):
the fields' units as the file's ``/points`` attribute ``units`` states them, the axes' from their values.
"""

import configparser
import dataclasses
import math

import h5py
import numpy as np
import pandas as pd

from . import units as u

MISSING_POSITION = 4294967295  # axis position of a point whose sub-space does not sweep the axis
STATUS_NAMES = {0: "evaluated", 1: "infeasible", 2: "failed"}


@dataclasses.dataclass
class Axis:
    key: str
    labels: list          # values as written in the space file, in space order
    si: np.ndarray        # SI value per label (NaN where not numeric)
    unit: str             # unit of `si` ("" for plain numbers, None when not numeric)
    elements: int         # elements per value for list-valued axes (1 for scalars)


@dataclasses.dataclass
class Results:
    path: str
    points: pd.DataFrame
    units: dict
    axes: list            # [Axis], in /points field order
    subspaces: list
    frontier: np.ndarray  # point indices of /frontier (the C++ frontier), ascending
    objectives: list      # objectives of /frontier, e.g. ["cost_usd", "iteration_time_s"]
    frontier_group_by: str  # how /frontier was grouped: "model.name" (one frontier per model) or "none"
    attrs: dict           # root attributes
    config: dict          # the effective configuration, flat "section.key" -> value text

    @property
    def space_size(self):
        return int(self.attrs.get("space_size", len(self.points)))

    @property
    def complete(self):
        """True when /points holds every point of the space (not a --keep frontier file)."""
        return len(self.points) == self.space_size

    @property
    def models(self):
        """The models of the stored points, sorted by name."""
        return sorted(str(m) for m in self.points["model"].unique())

    def axis(self, key):
        for axis in self.axes:
            if axis.key == key:
                return axis
        raise KeyError(f"no axis {key!r}; axes are {[a.key for a in self.axes]}")

    def swept_axes(self, min_values=2):
        """Axes taking at least `min_values` distinct values among the stored points."""
        return [a for a in self.axes if self.points[a.key].nunique(dropna=True) >= min_values]


def _text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.ndarray) and value.shape == ():
        return _text(value[()])
    if isinstance(value, np.generic):
        return value.item()
    return value


def _strings(dataset):
    return [_text(v) for v in dataset[()].tolist()] if dataset.shape != () else [_text(dataset[()])]


def parse_config_text(text):
    """INI text -> flat ``{"section.key": "value"}`` (keys outside sections stay bare)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False,
                                       inline_comment_prefixes=("#", ";"), default_section="\0none")
    parser.optionxform = str
    try:
        parser.read_string("[\0root]\n" + (text or ""))
    except configparser.Error:
        return {}
    flat = {}
    for section in parser.sections():
        for key, value in parser.items(section, raw=True):
            flat[key if section == "\0root" else f"{section}.{key}"] = value
    return flat


def _axis_from_group(group, key):
    labels = [str(v) for v in _strings(group["values"])]
    parsed = [u.try_parse_quantity(label) for label in labels]
    if "values_si" in group:
        si = np.asarray(group["values_si"][()], dtype=float)
        kinds = {kind for _, kind in parsed if kind is not None}
        unit = _text(group["values_si"].attrs["unit"]) if "unit" in group["values_si"].attrs else (
            kinds.pop() if len(kinds) == 1 else u.DIMENSIONLESS)
    elif all(kind is not None for _, kind in parsed) and len({k for _, k in parsed}) == 1:
        si = np.array([value for value, _ in parsed], dtype=float)
        unit = parsed[0][1] if parsed else u.DIMENSIONLESS
    else:
        si = np.full(len(labels), math.nan)
        unit = None
    elements = max((len(u.split_list(label)) for label in labels), default=1)
    return Axis(key=key, labels=labels, si=si, unit=unit, elements=elements)


def _list_element_columns(axis, positions, valid):
    """``<key>[i]_si`` columns for a list-valued axis whose elements all parse as one unit kind."""
    per_label = [[u.try_parse_quantity(e) for e in u.split_list(label)] for label in axis.labels]
    kinds = {kind for elems in per_label for _, kind in elems}
    if len(kinds) != 1 or None in kinds:
        return {}, None
    columns = {}
    for i in range(axis.elements):
        table = np.array([elems[i][0] if i < len(elems) else math.nan for elems in per_label])
        column = np.full(len(positions), math.nan)
        column[valid] = table[positions[valid]]
        columns[f"{axis.key}[{i}]_si"] = column
    return columns, kinds.pop()


def load_results(path):
    """Read a results file into a Results (see the module docstring for the columns)."""
    with h5py.File(path, "r") as f:
        if "points" not in f:
            raise ValueError(f"{path}: not a toposweep results file (no /points dataset)")
        points = f["points"][()]
        attrs = {k: _text(v) for k, v in f.attrs.items()}
        # The unit of every field comes from the file (toposweep writes it from its table of result
        # fields); every toposweep results file has the attribute.
        if "units" not in f["points"].attrs:
            raise ValueError(f"{path}: not a toposweep results file (/points has no units attribute)")
        file_units = u.parse_units_attribute(_text(f["points"].attrs["units"]))
        fields = list(points.dtype.names)
        space = f["space"] if "space" in f else None
        if space is not None and "axes" in space.attrs:
            axis_keys = [k for k in str(_text(space.attrs["axes"])).split(",") if k]
        else:  # fall back on the field layout: the axes sit between `subspace` and `status`
            axis_keys = fields[fields.index("subspace") + 1:fields.index("status")]
        subspaces = [str(s) for s in _strings(space["subspaces"])] \
            if space is not None and "subspaces" in space else []
        axes = [_axis_from_group(space["axes"][key], key) for key in axis_keys]
        if "frontier" in f:
            frontier = np.asarray(f["frontier"][()], dtype=np.uint64)
            objectives = [o for o in str(_text(f["frontier"].attrs.get("objectives", ""))).split(",") if o]
            # Files written before the attribute existed hold one pooled frontier.
            frontier_group_by = str(_text(f["frontier"].attrs.get("group_by", "none")))
        else:
            frontier, objectives, frontier_group_by = np.array([], dtype=np.uint64), [], "none"

    data = {}
    unit_of = {}
    for name in fields:
        if name in axis_keys:
            continue
        if name == "subspace" and subspaces:
            codes = points[name].astype(np.int64)
            data[name] = pd.Categorical.from_codes(codes, categories=subspaces, ordered=True)
            continue
        data[name] = points[name]
        if name not in file_units:
            raise ValueError(f"{path}: /points field {name!r} has no unit in the units attribute")
        unit = file_units[name]
        unit_of[name] = u.DIMENSIONLESS if unit == "1" else unit  # "1": a count or an index

    for axis in axes:
        positions = points[axis.key].astype(np.int64)
        valid = positions != MISSING_POSITION
        codes = np.where(valid, positions, -1)
        if len(set(axis.labels)) == len(axis.labels):
            categorical = pd.Categorical.from_codes(codes, categories=axis.labels, ordered=True)
            if axis.unit is not None and axis.elements == 1 and np.all(np.isfinite(axis.si)):
                # Numeric axes read best in value order (the space lists values by first appearance).
                by_value = [axis.labels[i] for i in np.argsort(axis.si, kind="stable")]
                categorical = categorical.reorder_categories(by_value, ordered=True)
            data[axis.key] = categorical
        else:  # repeated labels cannot be categories; keep plain strings
            data[axis.key] = pd.Series([axis.labels[p] if ok else None for p, ok in zip(positions, valid)],
                                       dtype=object)
        if axis.unit is not None and axis.elements == 1:
            column = np.full(len(points), math.nan)
            column[valid] = axis.si[positions[valid]]
            data[f"{axis.key}_si"] = column
            unit_of[f"{axis.key}_si"] = axis.unit
        elif axis.elements > 1:
            columns, unit = _list_element_columns(axis, positions, valid)
            data.update(columns)
            unit_of.update({name: unit for name in columns})

    frame = pd.DataFrame(data)
    config = parse_config_text(attrs.get("config", ""))
    frame["family"] = _families(frame, subspaces, config)
    frame["model"] = _models(frame, config)
    return Results(path=str(path), points=frame, units=unit_of, axes=axes, subspaces=subspaces,
                   frontier=frontier, objectives=objectives, frontier_group_by=frontier_group_by, attrs=attrs,
                   config=config)


def _models(frame, config):
    """Model of each point: its swept `model.name`, else the base configuration's (a sub-space that
    does not sweep model.name trains the base model)."""
    base = config.get("model.name", "")
    if "model.name" in frame:
        swept = frame["model.name"].astype(object)
        return swept.where(swept.notna(), base).astype(str)
    return pd.Series([base] * len(frame), index=frame.index, dtype=object)


def _families(frame, subspaces, config):
    """Topology family of each point: its swept `topology.kind`, else the base configuration's
    `topology.kind` for a single sub-space, else the sub-space name."""
    if "topology.kind" in frame:
        kind = frame["topology.kind"].astype(object)
        fallback = frame["subspace"].astype(object) if "subspace" in frame else "all"
        base = config.get("topology.kind")
        if base is not None:
            fallback = base
        return kind.where(kind.notna(), fallback).astype(str)
    if len(subspaces) > 1 and "subspace" in frame:
        return frame["subspace"].astype(str)
    return pd.Series([config.get("topology.kind", subspaces[0] if subspaces else "all")] * len(frame),
                     index=frame.index, dtype=object)


def status_counts(frame):
    """{"evaluated": n0, "infeasible": n1, "failed": n2} for the rows of `frame`."""
    counts = frame["status"].value_counts()
    return {name: int(counts.get(code, 0)) for code, name in STATUS_NAMES.items()}
