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


def read_ncu_report(path: str | Path, name: str | Path | None = None) -> pd.DataFrame:
    """One row per profiled launch; metric columns by ncu name, units in `df.attrs["units"]`.

    Rule results (e.g. SOLBottleneck) go to `df.attrs["rules"]`: launch -> list of dicts.
    `name` is the path errors mention (the user's file when `path` is a decompressed copy).
    """
    path = Path(path)
    if name is None or Path(name) == path:
        return _read_report(path)
    try:
        return _read_report(path)
    except ReportError as exc:  # name the user's file, not the temporary copy
        raise ReportError(str(exc).replace(str(path), str(name))) from None


def _read_report(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise ReportError(f"{path}: no such report")
    if path.stat().st_size == 0:
        raise ReportError(f"{path}: the report is empty (0 bytes)")
    module = import_ncu_report()
    if _from_nsight_install(module):
        rows, units, rules = _read_in_child(path, str(Path(module.__file__).parent))
    else:
        rows, units, rules = _read_rows(module, path)
    if not rows:
        raise ReportError(f"{path}: the report holds no kernel launches (no kernel was profiled, "
                          "or the file was cut short before the first one)")
    df = pd.DataFrame(rows)
    df.attrs["units"] = units
    df.attrs["rules"] = rules
    df.attrs["source"] = str(path)
    return df


def _from_nsight_install(module) -> bool:
    """True for the ncu_report.py shipped in an Nsight Compute install's extras/python."""
    return Path(getattr(module, "__file__", "")).name == "ncu_report.py"


def _read_in_child(path: Path, module_dir: str):
    """Read with the install's module in a child process: the one in Nsight Compute 2025.3.1's
    extras/python crashed (segfault in IMetric.unit(), seen on the H200), and a crash must not
    take the caller and its run directory down with it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            return pool.submit(_read_rows_in_child, str(path), module_dir).result()
        except BrokenProcessPool:
            raise ReportError(f"{path}: the ncu_report module from the Nsight Compute install crashed while "
                              "reading this report; install the PyPI package instead: pip install ncu-report") from None


def _read_rows_in_child(path: str, module_dir: str):
    sys.path.insert(0, module_dir)  # the same ncu_report.py the parent found
    return _read_rows(importlib.import_module("ncu_report"), Path(path))


def _read_rows(ncu_report, path: Path):
    """(rows, units, rules) from the report: one row dict per launch."""
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
                    if name not in units and value is not None and not isinstance(value, str):
                        units[name] = metric.unit() or ""
                rows.append(row)
                rules[launch] = _rule_results(action)
                launch += 1
    except ReportError:
        raise
    except Exception as exc:
        raise ReportError(f"{path}: report is damaged or truncated at launch {launch} ({exc})") from exc
    return rows, units, rules


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
