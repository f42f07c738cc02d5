"""A folder of run directories (runs/, tests/fixtures/h200/runs/) read as what it is: one row per run, with
its kernel, workload, step, floor, gap and the bound of the kernel that takes most of the step, the same
table a sweep folder's summary shows (roofline/pipelines/sweep_summary.py). A run that cannot be read is
a row naming why, not the end of the table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernels.batches import lens_text
from kernels.errors import RooflineError
from profiler.readers import is_report
from profiler.rundir import RunDir
from roofline.pipelines.loading import load
from roofline.pipelines.sweep_dir import SUMMARY_COLUMNS
from roofline.pipelines.sweep_summary import BATCH_COLUMNS, point_numbers


def run_folders(path: str | Path | None) -> list[Path]:
    """The run directories directly inside `path`, when it is a folder of them: not a run itself, and
    holding no report of its own (a folder of reports is read as one capture). [] otherwise."""
    if path is None:
        return []
    folder = Path(path)
    if not folder.is_dir() or RunDir.is_run(folder):
        return []
    entries = sorted(folder.iterdir())
    if any(p.is_file() and is_report(p) for p in entries):
        return []
    return [p for p in entries if p.is_dir() and RunDir.is_run(p)]


def _row(run_dir: Path) -> dict:
    row: dict = {"run": run_dir.name, "status": "done", "error": None}
    try:
        run = load(run_dir)
    except (RooflineError, ValueError, OSError) as exc:
        return {**row, "status": "unreadable", "error": str(exc).splitlines()[0]}
    w = run.workload
    row.update(kernel=run.spec.kernel if run.spec else None, **point_numbers(run))
    if w is not None:
        row.update(ctx_len=w.ctx_len, page_size=w.page_size, heads=w.heads, q_len=w.q_len, batch=w.batch)
        row["lens"] = lens_text(list(w.ctx_lens)) if w.ctx_lens else ""
    return row


def summarize_runs(folders: list[Path]) -> pd.DataFrame:
    """One row per run directory, in the folder's order (the sweep summary's columns, `run` naming each)."""
    rows = [_row(d) for d in folders]
    batched = any(r.get("batch", 1) not in (1, None) for r in rows)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS + (BATCH_COLUMNS if batched else []))
