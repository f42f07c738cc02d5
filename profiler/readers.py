"""One entry point for every capture format: the reader is chosen by a file's content, not its name.

Each reader returns the same tidy launch table (profiler/ncu_tidy.py columns; NaN where a source has
no counter), with `source` naming the file each launch came from.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from profiler.errors import ReportError
from profiler.files import (  # noqa: F401
    KIND_NAMES,
    NCU_CSV,
    NCU_REP,
    NSYS_REP,
    NSYS_SQLITE,
    NSYS_TABLES,
    READS,
    describe,
    one_line,
    plain_file,
    sniff,
)
from profiler.launch_table import LaunchTable, PcSamples
from profiler.ncu_csv import read_ncu_csv
from profiler.ncu_reader import read_ncu_report
from profiler.ncu_tidy import raw_metrics, tidy_launches
from profiler.nsys_reader import read_nsys_sqlite, timeline_launches


def read_launches(path: Path) -> LaunchTable:
    """The tidy launch table of one report file, whatever its format; `source` names `path`."""
    path = Path(path)
    kind = sniff(path)
    with plain_file(path) as plain:  # each reader names `path`, never the decompressed copy
        try:
            table = _read_kind(kind, plain, path)
        except ReportError as exc:
            raise ReportError(one_line(str(exc))) from None
        except (ValueError, OSError) as exc:  # e.g. ncu_tidy's UnitError: still one clear line
            raise ReportError(one_line(f"{path}: {KIND_NAMES[kind]} that cannot be read: {exc}")) from None
    table.frame["source"] = path.name
    return dataclasses.replace(table, source=str(path))


def _read_kind(kind: str, plain: Path, path: Path) -> LaunchTable:
    if kind == NCU_REP:  # the PC samples with the launches: each launch decoded once for both
        return tidy_launches(read_ncu_report(plain, name=path, metrics=raw_metrics(), pc_samples=True))
    if kind == NCU_CSV:
        return tidy_launches(read_ncu_csv(plain, name=path))
    if kind in (NSYS_REP, NSYS_SQLITE):  # an .nsys-rep is exported through nsys first
        return timeline_launches(read_nsys_sqlite(plain, name=path))
    raise ReportError(f"{path}: no reader for {kind}")  # pragma: no cover - every kind has a branch


def read_pm_samples(path: Path) -> pd.DataFrame | None:
    """The PM sampling series of every launch of one report (profiler/ncu_pm.py COLUMNS), or None when it
    holds none (a report of another preset, a CSV export, a timeline). A ReportError names the file and what
    is wrong: a damaged report, or one cut short (its last launches' series would be missing)."""
    path = Path(path)
    if sniff(path) != NCU_REP:
        return None
    with plain_file(path) as plain:
        try:
            table = read_ncu_report(plain, name=path, metrics=("gpu__time_duration.sum",))
        except ReportError as exc:
            raise ReportError(one_line(str(exc))) from None
    if table.cut:
        raise ReportError(f"{path}: the report is {table.cut}: the PM sampling of its later launches is missing")
    return table.pm_samples


def is_report(path: Path) -> bool:
    try:
        sniff(path)
        return True
    except ReportError:
        return False


def _one_gpu(folder: Path, files: list[Path], tables: list[LaunchTable]) -> None:
    """A ReportError naming each GPU's files when the folder's captures come from more than one GPU: their
    launches are never merged (one table, one GPU's ceilings and % of step across them would be wrong)."""
    by_gpu: dict[str, list[str]] = {}
    for p, t in zip(files, tables):
        devices = t.frame["device"].dropna().unique() if "device" in t.frame else []
        for d in devices:
            by_gpu.setdefault(str(d), []).append(p.name)
    if len(by_gpu) > 1:
        said = "; ".join(f"{gpu}: {', '.join(names)}" for gpu, names in by_gpu.items())
        raise ReportError(
            f"{folder}: captures from {len(by_gpu)} GPUs ({said}); roofline never merges GPUs: put each GPU's "
            "files in a folder of their own, or analyze each file"
        )


def read_folder(folder: Path) -> LaunchTable:
    """Every report in a folder (not recursive), one table; each launch names its source file.

    Nsight Systems timelines beside Nsight Compute reports are not read as more launches: the launches come
    from the ncu reports and `timelines` names the nsys files (an .nsys-rep beside its own sqlite export: the
    sqlite), which the loader adopts only where they are the same program (roofline/pipelines/loading_folder.py).
    Captures of different GPUs are refused (never merged)."""
    folder = Path(folder)
    kinds = {}
    for p in sorted(folder.iterdir()):
        if p.is_file():
            try:
                kinds[p] = sniff(p)
            except ReportError:
                continue
    files = list(kinds)
    if not files:
        runs = [p.name for p in sorted(folder.iterdir()) if (p / "manifest.json").is_file()]
        if runs:  # a folder of run directories: each one is read on its own
            raise ReportError(
                f"{folder}: a folder of {len(runs)} run director{'y' if len(runs) == 1 else 'ies'} and no report of its own: `roofline analyze "
                f"{folder}` gives a row per run; name one run ({folder / runs[0]}) for its report or comparison"
            )
        raise ReportError(f"{folder}: no report in this folder (roofline reads {READS})")
    timelines = [p for p in files if kinds[p] in (NSYS_REP, NSYS_SQLITE)]
    exported = {p.name.split(".")[0] for p in timelines if kinds[p] == NSYS_SQLITE}
    timelines = [p for p in timelines if kinds[p] == NSYS_SQLITE or p.name.split(".")[0] not in exported]
    counters = [p for p in files if kinds[p] in (NCU_REP, NCU_CSV)]
    folder_notes = []
    if counters and timelines:
        files = counters
        folder_notes.append(
            f"{', '.join(p.name for p in timelines)}: Nsight Systems timeline beside Nsight Compute "
            f"counters: read as the timeline, not as more launches (launches from "
            f"{', '.join(p.name for p in counters)})"
        )
    else:
        files = counters + timelines
    tables = [read_launches(p) for p in files]
    _one_gpu(folder, files, tables)
    offset = 0
    rules, missing, notes, cuts, pcs, functions, pms = {}, [], [], [], [], {}, []
    for t, p in zip(tables, files):  # launch numbers stay unique across files
        t.frame["launch"] = t.frame["launch"] + offset
        rules.update({offset + k: v for k, v in t.rules.items()})
        if t.pc_samples is not None and not t.pc_samples.frame.empty:
            pcs.append(t.pc_samples.frame.assign(launch=t.pc_samples.frame["launch"] + offset))
            for kernel, traits in t.pc_samples.functions.items():
                functions.setdefault(kernel, traits)
        if t.pc_note:
            notes.append(t.pc_note)
        if t.pm_samples is not None:
            pms.append(t.pm_samples.assign(launch=t.pm_samples["launch"] + offset))
        offset = int(t.frame["launch"].max()) + 1
        if t.cut:
            cuts.append(f"{p.name}: {t.cut}")
        missing += [m for m in t.missing_metrics if m not in missing]
        notes += [f"{p.name}: {n}" for n in t.notes]
    return LaunchTable(
        pd.concat([t.frame for t in tables], ignore_index=True),
        source=str(folder),
        rules=rules,
        notes=folder_notes + notes,
        missing_metrics=missing,
        cut="; ".join(cuts) or None,
        timelines=[p.name for p in timelines] if counters and timelines else [],
        pc_samples=PcSamples(pd.concat(pcs, ignore_index=True), functions) if pcs else None,
        pm_samples=pd.concat(pms, ignore_index=True) if pms else None,
    )
