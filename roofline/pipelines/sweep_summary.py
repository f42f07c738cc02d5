"""A sweep folder's summary, from the folder alone (no GPU): one row per point, with its step, floor, gap
and the bound of the kernel that takes most of the step (roofline/pipelines/sweeps.py runs the points)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernels.batches import lens_text
from profiler.rundir import RunDir
from roofline.pipelines.loading import load
from roofline.pipelines.sweep_dir import SUMMARY, SUMMARY_COLUMNS, SWEEP_FILE, SweepDir, SweepError

RESULT_FIELDS = ("step_ms", "floor_ms", "gap", "bound")  # what sweep.json keeps of a done point
BATCH_COLUMNS = ["batch", "lens"]  # the summary's, where a point has several requests (lens: a ragged batch's)


def point_numbers(run) -> dict:
    """A run's step, floor, gap and dominant bound (what a summary row shows)."""
    step = run.step
    return dict(
        step_ms=step.kernel_ms_per_step if step else None,
        floor_ms=step.floor_ms if step else None,
        gap=step.gap if step else None,
        bound=_dominant_bound(run),
    )


def _dominant_bound(run) -> str | None:
    ks = [k for k in run.analysis.kernels if k.duration_ms is not None]
    if not ks:
        return None
    k = max(ks, key=lambda k: k.duration_ms * k.launches)
    return f"{k.bound} ({k.cause})" if k.cause else k.bound


def summarize(sweep_dir: str | Path) -> pd.DataFrame:
    """One row per point: kernel, workload, status, step ms, floor ms, gap, bound of the kernel that
    takes most of the step; failed points with their error. Reads only the folder, writes nothing.

    A done point whose run folder is not there (a sweep committed without its runs) shows the numbers
    sweep.json recorded for it, else those of the folder's summary.csv, and says so in its row."""
    sweep = SweepDir.open(sweep_dir)
    entries = dict(sweep.state()["points"])
    for d in sweep.runs():
        if d.name not in entries:
            spec = RunDir(d).spec()
            entries[d.name] = {
                "kernel": spec.kernel if spec else None,
                "workload": spec.workload if spec else {},
                "status": "done",
            }
    if not entries:
        raise SweepError(
            f"{sweep.path}: {SWEEP_FILE} names no point and there are no run directories: nothing to summarize"
        )
    saved = sweep.saved_summary()
    rows = []
    for name, e in entries.items():
        w = e.get("workload") or {}
        row = {
            "kernel": e.get("kernel"),
            "ctx_len": w.get("ctx_len"),
            "page_size": w.get("page_size"),
            "heads": w.get("heads"),
            "q_len": w.get("q_len"),
            "status": e.get("status"),
            "step_ms": None,
            "floor_ms": None,
            "gap": None,
            "bound": None,
            "error": e.get("error"),
            "run": name,
            "batch": w.get("batch"),
            "lens": lens_text(w["ctx_lens"]) if w.get("ctx_lens") else "",
        }
        if e.get("status") == "done" and not sweep.point(name).exists():
            row.update(_recorded(name, e, saved, sweep.path))
        elif e.get("status") == "done":
            try:
                run = load(sweep.point(name))
            except Exception as exc:  # noqa: BLE001 - one bad point does not hide the others
                row.update(status="unreadable", error=str(exc).splitlines()[0])
            else:
                row.update(point_numbers(run))
        rows.append(row)
    batched = any((e.get("workload") or {}).get("batch", 1) != 1 for e in entries.values())
    table = pd.DataFrame(rows, columns=SUMMARY_COLUMNS + (BATCH_COLUMNS if batched else []))
    return table.sort_values(
        ["kernel", "heads", "q_len", "page_size", "ctx_len"], kind="stable", na_position="last"
    ).reset_index(drop=True)


def _recorded(name: str, entry: dict, saved: dict[str, dict], sweep_dir: Path) -> dict:
    """A done point without its run folder: the numbers recorded when it ran, or why there are none."""
    gone = f"its run folder {name} is not in {sweep_dir}"
    if entry.get("step_ms") is not None:
        return {**{k: entry.get(k) for k in RESULT_FIELDS}, "error": f"{gone}: numbers as {SWEEP_FILE} recorded them"}
    if name in saved:
        return {
            **{k: saved[name][k] for k in RESULT_FIELDS},
            "error": f"{gone}: numbers from {SUMMARY}, written when the runs were there",
        }
    when = f" on {entry['finished']}" if entry.get("finished") else ""
    return {
        "status": "missing",
        "error": f"{SWEEP_FILE} records it done{when}, but {gone} and neither "
        f"{SWEEP_FILE} nor {SUMMARY} holds its numbers",
    }
