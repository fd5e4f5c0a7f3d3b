"""Quantities written with units (``100Gbps``, ``1us``, ``64MiB``) -> SI values, the ``units``
attribute of a results file, and values formatted with their unit. The parser mirrors the C++ parser's table (src/util/units.cpp) so that axis labels in a results
file can be turned into numbers even where the file carries no ``values_si`` dataset (list-valued
axes such as per-dimension bandwidths)."""

import math
import re

# Unit kinds, named by their SI unit as used in results field names.
SECONDS = "s"
BYTES = "B"
BYTES_PER_S = "B/s"
USD = "USD"
DIMENSIONLESS = ""

_PREFIXES = {
    "": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50,
}


def _unit_table():
    table = {"s": (SECONDS, 1.0), "ms": (SECONDS, 1e-3), "us": (SECONDS, 1e-6),
             "\u00b5s": (SECONDS, 1e-6), "ns": (SECONDS, 1e-9), "ps": (SECONDS, 1e-12),
             "min": (SECONDS, 60.0), "h": (SECONDS, 3600.0)}
    for prefix, factor in _PREFIXES.items():
        table[prefix + "B"] = (BYTES, factor)
        table[prefix + "b"] = (BYTES, factor / 8.0)
        for base, bits in (("B/s", 1.0), ("Bps", 1.0), ("b/s", 8.0), ("bps", 8.0)):
            table[prefix + base] = (BYTES_PER_S, factor / bits)
    return table


_UNITS = _unit_table()
_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\s\d.+-][^\s]*)?\s*$")


def parse_quantity(text):
    """``"100Gbps"`` -> ``(12.5e9, "B/s")``; a bare number -> ``(value, "")``.

    Raises ValueError for text that is not a number with an optional known unit."""
    match = _QUANTITY.match(str(text))
    if not match:
        raise ValueError(f"not a quantity: {text!r}")
    number = float(match.group(1))
    unit = match.group(2) or ""
    if unit == "":
        return number, DIMENSIONLESS
    if unit not in _UNITS:
        raise ValueError(f"unknown unit {unit!r} in {text!r}")
    kind, factor = _UNITS[unit]
    return number * factor, kind


def try_parse_quantity(text):
    """Like parse_quantity, but ``(nan, None)`` when the text is not a quantity."""
    try:
        return parse_quantity(text)
    except ValueError:
        return math.nan, None


def split_list(label):
    """Elements of a list-valued label (``"100GB/s,50GB/s"``); one element for a scalar label."""
    return [part.strip() for part in str(label).split(",") if part.strip() != ""]


def parse_units_attribute(text):
    """``"iteration_time_s=s;cost_usd=USD"`` -> ``{"iteration_time_s": "s", "cost_usd": "USD"}``."""
    units = {}
    for pair in str(text).split(";"):
        if "=" in pair:
            field, unit = pair.split("=", 1)
            units[field.strip()] = unit.strip()
    return units


_SCALES = {
    SECONDS: [(1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")],
    BYTES: [(1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")],
    BYTES_PER_S: [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s")],
}
_USD_SCALES = [(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]


def format_quantity(value, unit, digits=4):
    """A human-readable value with a decimal prefix: ``format_quantity(0.0123, "s") == "12.3 ms"``."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if unit == USD:
        for factor, suffix in _USD_SCALES:
            if abs(value) >= factor or factor == 1.0:
                return f"${value / factor:.{digits}g}{suffix}"
    scales = _SCALES.get(unit)
    if not scales:
        return f"{value:.{digits}g}" + (f" {unit}" if unit else "")
    magnitude = abs(value)
    for factor, name in scales:
        if magnitude >= factor:
            return f"{value / factor:.{digits}g} {name}"
    factor, name = scales[-1]
    return f"{value / factor:.{digits}g} {name}"
