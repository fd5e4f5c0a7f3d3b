"""Post-processing of toposweep sweep results: load the HDF5 file into pandas, compute Pareto
frontiers (independently of the C++ code), draw figures and write a report.

    import analysis
    results = analysis.load_results("results.h5")
    front = analysis.frontier(results.points, ["cost_usd", "iteration_time_s"], group_by="model")

Command line: ``/usr/bin/python3 -m analysis.report results.h5 --out report/`` (docs/analysis.md).
"""

from .pareto import best_time_at_cost, frontier, pareto_mask, parse_objectives
from .results import Axis, Results, load_results, parse_config_text, status_counts
from .units import format_quantity, parse_quantity

__all__ = ["Axis", "Results", "best_time_at_cost", "format_quantity", "frontier", "load_results",
           "pareto_mask", "parse_config_text", "parse_objectives", "parse_quantity", "status_counts"]
