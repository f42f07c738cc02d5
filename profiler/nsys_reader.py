"""Read an Nsight Systems sqlite export (`nsys export --type sqlite`) into pandas tables.

    timeline = read_nsys_sqlite("run/profile.sqlite")
    timeline.launches   one row per kernel launch: name, start/end ns, grid, block, stream, ...
    timeline.kernels    per kernel in the profiled range: launches, total/median/min/max ms
    timeline.steps      per NVTX `step` range: step time, kernel time, idle gaps, launch API time
    timeline.summary    the run in a few numbers (the last three: profiler/nsys_summary.py)

Tables used (schema 3.20.3, nsys 2025.3): CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME
(the launch calls, joined on correlationId within a process), NVTX_EVENTS (range types looked up
by name in ENUM_NSYS_EVENT_TYPE), StringIds, TARGET_INFO_GPU. The export's META_DATA_EXPORT is
read first; a schema of another major version, or a missing table or column, is a clear error
(profiler/nsys_schema.py).
"""

from __future__ import annotations

import dataclasses
import math
import sqlite3
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from profiler.errors import ProfilerError, ReportError, ToolNotFound
from profiler.files import describe, plain_file
from profiler.launch_table import LaunchTable
from profiler.ncu_tidy import tidy_launches
from profiler.nsys import export_command, find_nsys
from profiler.nsys_schema import KERNEL_INTS, check_schema, column_names, export_meta, range_event_types
from profiler.nsys_summary import summarize_kernels, summarize_steps, timeline_summary
from profiler.nvtx import RANGE, STEP
from profiler.proc import ToolControl, run_tool

NSYS_REP_MAGIC = b"NVIDIA Tegra Profiler Report"  # first bytes of every .nsys-rep seen (nsys 2025.3.1)
SQLITE_MAGIC = b"SQLite format 3\x00"
READ_BUDGET_S = 120.0  # a damaged file must not hang the reader
_PID_BITS = 24  # nsys globalTid = globalPid | tid (low 24 bits)


@dataclass
class Timeline:
    """An nsys timeline as tables; times in ns (`*_ns`) or ms (`*_ms`)."""

    source: str
    launches: pd.DataFrame
    kernels: pd.DataFrame
    steps: pd.DataFrame
    summary: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        def rows(df: pd.DataFrame) -> list[dict]:
            return [{k: _plain(v) for k, v in r.items()} for r in df.to_dict(orient="records")]

        return {
            "source": self.source,
            "summary": {k: _plain(v) for k, v in self.summary.items()},
            "kernels": rows(self.kernels),
            "steps": rows(self.steps),
        }


def _plain(v):
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    return None if isinstance(v, float) and math.isnan(v) else v


# ---------------------------------------------------------------------------------------------
# opening


def is_nsys_capture(path: Path) -> bool:
    """An nsys report or an SQLite file (the nsys export, by its first bytes)."""
    try:
        with open(path, "rb") as f:
            head = f.read(32)
    except OSError:
        return False
    return head.startswith(NSYS_REP_MAGIC) or head.startswith(SQLITE_MAGIC)


def read_nsys_sqlite(path: str | Path, nsys: str | None = None, name: str | Path | None = None) -> Timeline:
    """The timeline of an nsys sqlite export, or of an `.nsys-rep` (exported through nsys first).
    `name`: the file messages and the timeline's `source` name (the user's, when `path` is a copy)."""
    path = Path(path)
    name = Path(name) if name is not None else path
    if not path.exists():
        raise ReportError(f"{name}: no such file")
    if path.is_dir():
        raise ReportError(f"{name}: is a folder, not an nsys export")
    try:
        with open(path, "rb") as f:
            head = f.read(32)
    except OSError as exc:
        raise ReportError(f"{name}: cannot read ({exc.strerror})") from None
    if head.startswith(NSYS_REP_MAGIC):
        with tempfile.TemporaryDirectory(prefix="roofline-nsys-") as tmp:
            return _read(export_report(path, Path(tmp), nsys, name=name), name=name)
    if head.startswith(b"\x1f\x8b"):
        with plain_file(path) as plain:
            return read_nsys_sqlite(plain, nsys, name=name)
    return _read(path, name=name)


def export_report(
    report: Path, out_dir: Path, nsys: str | None = None, timeout: float = 600, name: str | Path | None = None
) -> Path:
    """`nsys export --type sqlite` of `report` into `out_dir`; a clear error without nsys.
    `name`: the report to name in messages (default `report`)."""

    name = Path(name) if name is not None else Path(report)
    try:
        exe = find_nsys(nsys, option=nsys is not None)  # analyze and report take no --nsys
    except ToolNotFound as exc:
        raise ReportError(
            f"{name}: an Nsight Systems report (.nsys-rep); roofline reads its sqlite export, and "
            f"making one needs nsys: {exc}. Or export it where nsys is: "
            f"nsys export --type sqlite -o {report.stem}.sqlite {report.name}"
        ) from None
    sqlite = out_dir / (report.stem + ".sqlite")
    log = out_dir / "export.log"
    try:
        result = run_tool(export_command(exe, report, sqlite), log, "nsys export", ToolControl(timeout=timeout))
    except ProfilerError as exc:
        raise ReportError(f"{name}: {str(exc).splitlines()[0]}") from None
    if result.returncode != 0 or not sqlite.exists():
        tail = "; ".join(ln.strip() for ln in result.lines[-3:] if ln.strip())
        raise ReportError(f"{name}: nsys export --type sqlite failed (exit code {result.returncode}): {tail}")
    return sqlite


def _connect(path: Path) -> sqlite3.Connection:
    uri = path.resolve().as_uri() + "?mode=ro&immutable=1"
    conn = sqlite3.connect(uri, uri=True)
    deadline = time.monotonic() + READ_BUDGET_S
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    return conn


def _read(path: Path, name: Path) -> Timeline:
    if path.stat().st_size == 0:
        raise ReportError(f"{name}: the file is empty (0 bytes)")
    try:
        with open(path, "rb") as f:
            head = f.read(16)
        if not head.startswith(SQLITE_MAGIC):
            raise ReportError(
                f"{name}: {describe(head)}, not an Nsight Systems sqlite export "
                "(nsys export --type sqlite) or .nsys-rep"
            )
        conn = _connect(path)
        try:
            return _timeline(conn, name)
        finally:
            conn.close()
    except ReportError:
        raise
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            raise ReportError(f"{name}: reading took longer than {READ_BUDGET_S:g} s (a damaged file?)") from None
        raise ReportError(f"{name}: damaged or cut short: not a readable nsys sqlite export ({_short(exc)})") from None
    except (
        sqlite3.Error,
        ValueError,
        TypeError,
        OverflowError,
        KeyError,
        IndexError,
        ArithmeticError,
        MemoryError,
        UnicodeDecodeError,
    ) as exc:
        raise ReportError(
            f"{name}: damaged or cut short: not a readable nsys sqlite export ({type(exc).__name__}: {_short(exc)})"
        ) from None


def _short(exc: BaseException, limit: int = 160) -> str:
    """An exception's text on one line, cut (sqlite quotes whole schema statements in some errors)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# tables


def _query(conn: sqlite3.Connection, sql: str, params=()) -> pd.DataFrame:
    cur = conn.execute(sql, params)
    cols = [d[0] for d in cur.description]
    return pd.DataFrame(cur.fetchall(), columns=cols)


def _ints(df: pd.DataFrame, cols: list[str], table: str, name: Path) -> pd.DataFrame:
    for c in cols:
        values = pd.to_numeric(df[c], errors="coerce")
        if values.isna().any() or not np.isfinite(values.astype(float)).all():
            raise ReportError(f"{name}: {table}.{c} holds a missing or non-numeric value (damaged export?)")
        df[c] = values.astype("int64")
    return df


def _launches(conn: sqlite3.Connection, name: Path, gpus: pd.DataFrame) -> pd.DataFrame:
    k = _query(
        conn,
        """
        SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, k.globalPid,
               k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, k.registersPerThread,
               k.staticSharedMemory, k.dynamicSharedMemory,
               s.value AS kernel, d.value AS demangled_name, m.value AS mangled_name
        FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
        LEFT JOIN StringIds AS s ON s.id = k.shortName
        LEFT JOIN StringIds AS d ON d.id = k.demangledName
        LEFT JOIN StringIds AS m ON m.id = {mangled}
        ORDER BY k.start""".format(
            mangled="k.mangledName" if "mangledName" in column_names(conn, "CUPTI_ACTIVITY_KIND_KERNEL") else "NULL"
        ),
    )
    if k.empty:
        raise ReportError(f"{name}: the export's kernel table is empty: nsys recorded no kernel launch")
    if k["kernel"].isna().any():
        raise ReportError(f"{name}: a kernel's name id is not in StringIds (damaged export?)")
    k = _ints(k, list(KERNEL_INTS), "CUPTI_ACTIVITY_KIND_KERNEL", name)
    if (k["end"] < k["start"]).any():
        raise ReportError(f"{name}: a kernel ends before it starts (damaged export?)")
    k["demangled_name"] = k["demangled_name"].fillna(k["kernel"])
    k["mangled_name"] = k["mangled_name"].fillna(k["kernel"])
    k["shared_mem_per_block"] = pd.to_numeric(k.pop("staticSharedMemory"), errors="coerce") + pd.to_numeric(
        k.pop("dynamicSharedMemory"), errors="coerce"
    )
    r = _query(
        conn,
        """
        SELECT r.start AS api_start, r.end AS api_end, r.correlationId, r.globalTid, s.value AS api
        FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r LEFT JOIN StringIds AS s ON s.id = r.nameId
        WHERE r.correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL)""",
    )
    r = _ints(r, ["api_start", "api_end", "correlationId", "globalTid"], "CUPTI_ACTIVITY_KIND_RUNTIME", name)
    r["pid_key"] = r["globalTid"] // (1 << _PID_BITS)
    k["pid_key"] = k["globalPid"] // (1 << _PID_BITS)
    r = r.drop_duplicates(["pid_key", "correlationId"])
    out = k.merge(r, on=["pid_key", "correlationId"], how="left").drop(columns="pid_key")
    out["duration_ns"] = out["end"] - out["start"]
    out["api_ns"] = out["api_end"] - out["api_start"]
    out["grid_size"] = out["gridX"] * out["gridY"] * out["gridZ"]
    out["block_size"] = out["blockX"] * out["blockY"] * out["blockZ"]
    device = {int(i): str(n) for i, n in zip(gpus.get("id", []), gpus.get("name", []))}
    sms = {int(i): s for i, s in zip(gpus.get("id", []), gpus.get("smCount", []))}
    only = next(iter(device.values())) if len(device) == 1 else None
    out["device"] = [device.get(int(d), only) for d in out["deviceId"]]
    out["sm_count"] = [sms.get(int(d), np.nan) for d in out["deviceId"]]
    return out.rename(
        columns={
            "start": "start_ns",
            "end": "end_ns",
            "deviceId": "device_id",
            "streamId": "stream",
            "correlationId": "correlation_id",
            "registersPerThread": "registers_per_thread",
            "api_start": "api_start_ns",
            "api_end": "api_end_ns",
            "globalTid": "thread",
        }
    )


def _ranges(conn: sqlite3.Connection, name: Path, types: list[int]) -> pd.DataFrame:
    marks = ",".join("?" * len(types))
    df = _query(
        conn,
        f"""
        SELECT e.start, e.end, e.globalTid AS thread, COALESCE(e.text, s.value) AS text
        FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId
        WHERE e.eventType IN ({marks}) AND e.end IS NOT NULL
        ORDER BY e.start""",
        types,
    )
    df = df[df["text"].isin([RANGE, STEP])].copy()
    df["thread"] = pd.to_numeric(df["thread"], errors="coerce")
    return _ints(df, ["start", "end"], "NVTX_EVENTS", name)


def _inside(launches: pd.DataFrame, ranges: pd.DataFrame) -> pd.Series:
    """For each launch, the index (0, 1, ...) of the range in `ranges` whose span holds its launch
    API call on the same thread (ranges on a thread do not overlap); -1 when none does."""
    out = pd.Series(-1, index=launches.index, dtype="int64")
    if ranges.empty or launches["api_start_ns"].isna().all():
        return out
    ranges = ranges.reset_index(drop=True)
    for thread, rs in ranges.groupby("thread", dropna=False):
        starts, ends = rs["start"].to_numpy(), rs["end"].to_numpy()
        mine = launches["thread"] == thread if not pd.isna(thread) else launches["thread"].notna()
        t = launches.loc[mine, "api_start_ns"].to_numpy(dtype="float64")
        pos = np.searchsorted(starts, t, side="right") - 1
        ok = (pos >= 0) & (t <= ends[np.clip(pos, 0, None)])
        out.loc[mine] = np.where(ok, rs.index.to_numpy()[np.clip(pos, 0, None)], -1)
    return out


def _timeline(conn: sqlite3.Connection, name: Path) -> Timeline:
    meta = export_meta(conn, name)
    present = check_schema(conn, name, meta)
    gpus = (
        _query(conn, "SELECT id, name, smCount FROM TARGET_INFO_GPU")
        if "TARGET_INFO_GPU" in present
        else pd.DataFrame(columns=["id", "name", "smCount"])
    )
    gpus = gpus.dropna(subset=["id"])
    launches = _launches(conn, name, gpus)
    notes = []
    if "NVTX_EVENTS" in present:
        ranges = _ranges(conn, name, range_event_types(conn, name))
    else:
        ranges = pd.DataFrame(columns=["start", "end", "thread", "text"])
        notes.append("no NVTX_EVENTS table (not traced with -t nvtx): no profiled range, no steps")
    outer = ranges[ranges["text"] == RANGE]
    steps = ranges[ranges["text"] == STEP].reset_index(drop=True)
    launches["in_range"] = _inside(launches, outer) >= 0 if len(outer) else False
    launches["step"] = _inside(launches, steps)
    if launches["api_start_ns"].isna().any():
        notes.append(f"{int(launches['api_start_ns'].isna().sum())} launches have no matching launch API call")
    profiled = launches[launches["in_range"]] if len(outer) else launches
    if len(outer) and profiled.empty:
        notes.append(f"no kernel was launched inside the NVTX range {RANGE!r}")
    step_table = summarize_steps(launches, steps)
    summary = timeline_summary(meta, launches, profiled, outer, step_table, name)
    summary["notes"] = notes
    return Timeline(
        source=str(name), launches=launches, kernels=summarize_kernels(profiled), steps=step_table, summary=summary
    )


# ---------------------------------------------------------------------------------------------
# the tidy launch table every reader gives


def timeline_launches(timeline: Timeline) -> LaunchTable:
    """The timeline's launches as the tidy launch table (profiler/ncu_tidy.py columns, counters NaN):
    the launches inside the harness's NVTX range when the capture has one, else every launch."""

    t = timeline.launches
    if timeline.summary.get("range"):
        t = t[t["in_range"]]
    t = t.reset_index(drop=True)
    # the same quantities under the names ncu gives them, so one tidy step names and scales them
    raw = pd.DataFrame(
        {
            "launch": range(len(t)),
            "kernel": t["kernel"],
            "mangled_name": t["mangled_name"],
            "device__attribute_display_name": t["device"],
            "gpu__time_duration.sum": t["duration_ns"].astype(float),
            "launch__grid_size": t["grid_size"].astype(float),
            "launch__block_size": t["block_size"].astype(float),
            "launch__registers_per_thread": t["registers_per_thread"].astype(float),
            "launch__shared_mem_per_block": t["shared_mem_per_block"].astype(float),
            "device__attribute_multiprocessor_count": t["sm_count"].astype(float),
        }
    )
    units = {"gpu__time_duration.sum": "ns", "launch__shared_mem_per_block": "byte"}
    tidy = tidy_launches(LaunchTable(raw, source=timeline.source, units=units))
    out = tidy.frame
    for col in ("stream", "start_ns", "end_ns", "correlation_id", "step"):
        out[col] = t[col].to_numpy()
    # a timeline has no counters by nature; nothing is missing from it
    return dataclasses.replace(tidy, missing_metrics=[], counters=False)


def read_nsys_launches(path: str | Path, nsys: str | None = None) -> LaunchTable:
    """The tidy launch table of an nsys sqlite export (or `.nsys-rep`): duration, grid, block,
    registers and device from the timeline; every counter column NaN."""
    return timeline_launches(read_nsys_sqlite(path, nsys))
