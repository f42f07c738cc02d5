"""Read a `.ncu-rep` with NVIDIA's `ncu_report` module into a pandas table, one row per launch."""

from __future__ import annotations

import glob
import importlib
import os
import sys
from pathlib import Path

import pandas as pd

from profiler.errors import ReportError

_NCU_PYTHON_GLOBS = ("/opt/nvidia/nsight-compute/*/extras/python",
                     "/usr/local/cuda/nsight-compute-*/extras/python")

# Columns every table has, whatever metrics the report holds.
ID_COLUMNS = ("launch", "range", "kernel", "mangled_name", "nvtx")


def import_ncu_report():
    """The PyPI `ncu-report` wheel, else the copy that ships in an Nsight Compute install."""
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        pass
    candidates = []
    if os.environ.get("NCU_REPORT_PYTHON"):
        candidates.append(os.environ["NCU_REPORT_PYTHON"])
    for pattern in _NCU_PYTHON_GLOBS:
        candidates += sorted(glob.glob(pattern), reverse=True)
    for path in candidates:
        if Path(path, "ncu_report.py").exists():
            sys.path.insert(0, path)
            try:
                return importlib.import_module("ncu_report")
            except ImportError:
                sys.path.remove(path)
    raise ReportError("cannot read .ncu-rep files: install the `ncu-report` package "
                      "(pip install ncu-report) or set NCU_REPORT_PYTHON to Nsight Compute's extras/python")


def _metric_value(metric):
    """A metric's value in its base unit, or None when ncu has none (`n/a`)."""
    if hasattr(metric, "has_value") and not metric.has_value():
        return None
    value = metric.value()
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    return value


def read_ncu_report(path: str | Path) -> pd.DataFrame:
    """One row per profiled launch; metric columns by ncu name, units in `df.attrs["units"]`.

    Rule results (e.g. SOLBottleneck) go to `df.attrs["rules"]`: launch -> list of dicts.
    """
    path = Path(path)
    if not path.exists():
        raise ReportError(f"{path}: no such report")
    if path.stat().st_size == 0:
        raise ReportError(f"{path}: the report is empty (0 bytes)")
    ncu_report = import_ncu_report()
    try:
        ctx = ncu_report.load_report(str(path))
    except Exception as exc:  # the library raises several types for a bad file
        raise ReportError(f"{path}: not a readable Nsight Compute report ({exc})") from exc

    rows: list[dict] = []
    units: dict[str, str] = {}
    rules: dict[int, list] = {}
    launch = 0
    try:
        for r in range(ctx.num_ranges()):
            rng = ctx.range_by_idx(r)
            for a in range(rng.num_actions()):
                action = rng.action_by_idx(a)
                if not action.name() or not action.metric_names():
                    raise ReportError(f"{path}: report is truncated or damaged: launch {launch} has no "
                                      f"kernel name or metrics ({launch} complete launches before it)")
                row = {"launch": launch, "range": r, "kernel": action.name(),
                       "mangled_name": action.name(action.NameBase_MANGLED), "nvtx": _nvtx_text(action)}
                for name in action.metric_names():
                    metric = action.metric_by_name(name)
                    if metric is None:
                        continue
                    row[name] = value = _metric_value(metric)
                    # unit() of a string metric crashed the ncu_report in Nsight Compute 2025.3.1's
                    # extras/python (segfault, seen on the H200): ask numeric metrics only
                    if name not in units and value is not None and not isinstance(value, str):
                        units[name] = metric.unit() or ""
                rows.append(row)
                rules[launch] = _rule_results(action)
                launch += 1
    except ReportError:
        raise
    except Exception as exc:
        raise ReportError(f"{path}: report is damaged or truncated at launch {launch} ({exc})") from exc
    if not rows:
        raise ReportError(f"{path}: the report holds no kernel launches (no kernel was profiled, or the file was cut short before the first one)")
    df = pd.DataFrame(rows)
    df.attrs["units"] = units
    df.attrs["rules"] = rules
    df.attrs["source"] = str(path)
    return df


def _nvtx_text(action) -> str:
    try:
        state = action.nvtx_state()
        if state is None:
            return ""
        names = []
        for domain_id in state.domains():
            for rng in state.domain_by_id(domain_id).push_pop_ranges():
                names.append(rng)
        return "/".join(names)
    except Exception:
        return ""


def _rule_results(action) -> list[dict]:
    try:
        return list(action.rule_results_as_dicts())
    except Exception:
        return []
