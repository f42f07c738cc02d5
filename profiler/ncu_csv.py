"""Read Nsight Compute's `--csv --page raw` output into the same raw table as profiler/ncu_reader.py.

The CSV is a header row (`"ID","Process ID",...` then one column per metric), a units row in ncu's
display units ("ms", "Gbyte/s", "%", "Kbyte"; base units with `--print-units base`), and one row per
profiled launch; numbers may carry thousands separators and missing values read `n/a` or are empty.
It may sit inside a program's captured stdout, after `==PROF==`/`==WARNING==` lines and the
program's own prints. Values are converted to ncu_report's base units (byte, ns, hz, byte/s), so
profiler/ncu_tidy.py's `tidy_launches` reads both sources alike.

Raw CSV holds no rule results (ncu's SOLBottleneck and other rule messages): the table's `rules`
are empty and its `notes` say so.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from profiler.errors import ReportError
from profiler.launch_table import LaunchTable
from profiler.names import short_kernel_name
from profiler.ncu_tidy import UnitError, unit_scale

HEADER_START = '"ID","Process ID"'
# The CSV's own columns that are not metrics (ncu 2025.3 `--page raw`).
ID_FIELDS = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
)
NVTX_PUSH_POP = "thread Domain:Push/Pop_Range"
RULES_NOTE = (
    "read from ncu CSV: the raw page holds no rule results, so ncu's own verdict "
    "(SOLBottleneck) is not shown; read the .ncu-rep for it"
)
_NUMBER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_MISSING = ("", "n/a", "no data")  # compared lower-case
_TIME = {"s", "second", "ms", "msecond", "us", "usecond", "ns", "nsecond"}
_PREFIXED = re.compile(r"([KMGT])(byte|hz)", re.IGNORECASE)


def has_csv_header(path: Path, limit: int = 64 << 20) -> bool:
    """True when a text file holds an ncu raw-page CSV header line (within its first `limit` bytes)."""
    seen = 0
    with open(path, "rb") as f:
        for line in f:
            if line.lstrip(b"\xef\xbb\xbf").startswith(HEADER_START.encode()):
                return True
            seen += len(line)
            if seen > limit:
                return False
    return False


def base_unit(unit: str) -> tuple[str, float]:
    """ncu_report's base unit for a display unit, and the factor from one to the other.

    ncu_report gives times in ns, rates per second, bytes in byte and clocks in hz:
    "ms" -> ("ns", 1e6), "Gbyte/s" -> ("byte/s", 1e9), "sector/us" -> ("sector/s", 1e6).
    Unknown units raise UnitError.
    """
    unit = (unit or "").strip()
    parts = unit.split("/")
    base = []
    for i, part in enumerate(parts):
        if part.lower() in _TIME:
            base.append("ns" if (i == 0 and len(parts) == 1) else "s")
        else:
            m = _PREFIXED.fullmatch(part)
            base.append(m.group(2).lower() if m else part)
    name = "/".join(base)
    return name, unit_scale(unit) / unit_scale(name)


def parse_number(text: str) -> float | int | None | str:
    """A CSV cell as a number (thousands separators dropped), None for n/a or empty, else the text."""
    text = text.strip()
    if text.lower() in _MISSING:
        return None
    if any(c.isdigit() for c in text) and _NUMBER.fullmatch(text):
        plain = text.replace(",", "")
        try:
            return int(plain)
        except ValueError:
            return float(plain)
    return text


def nvtx_text(cell: str) -> str:
    """The push/pop range names of an ncu CSV NVTX cell, joined by '/' as ncu_reader does.

    ncu prints `PID  "<domain>:<range>:<payload type>:..."  "<domain>:<range>:..."`.
    """
    names = []
    for quoted in re.findall(r'"([^"]*)"', cell):
        fields = quoted.split(":")
        if len(fields) >= 2:
            names.append(fields[1])
    return "/".join(names)


@dataclass(frozen=True)
class _Columns:
    """The CSV's header and units rows, read: each column's index, the NVTX column, the metric columns and
    the (base unit, factor) that scales each metric's values."""

    header: list[str]
    units: list[str]
    col: dict[str, int]
    nvtx_col: int | None
    metrics: list[tuple[int, str]]
    scales: dict[int, tuple[str, float]]


def read_ncu_csv(path: str | Path, name: str | Path | None = None) -> LaunchTable:
    """One row per launch from an ncu raw-page CSV; metric columns by ncu name, in base units
    (`.units`), `.rules` empty. `name`: the file messages and `.source` name."""
    path = Path(path)
    where = Path(name) if name is not None else path
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        lines = f.read().splitlines()
    start, columns = _columns(lines, where)
    rows, unit_of, ids = [], {}, set()
    for n in range(start + 2, len(lines)):
        line = lines[n]
        if not line.startswith('"'):
            continue  # blank, ==PROF==/==WARNING== lines, the program's own prints
        row = _launch_row(_row(line, where, n), columns, where, n, ids, unit_of)
        ids.add(row["launch"])
        rows.append(row)
    if not rows:
        raise ReportError(
            f"{where}: the ncu CSV has a header but no launch rows (no kernel was profiled, "
            "or the output was cut short)"
        )
    if sorted(ids) != list(range(len(ids))):
        missing = sorted(set(range(max(ids) + 1)) - ids)
        raise ReportError(
            f"{where}: launch IDs are not 0..{len(ids) - 1}: missing {missing[:5]} (rows were lost or mangled)"
        )
    frame = pd.DataFrame(rows).sort_values("launch", ignore_index=True)
    return LaunchTable(frame, source=str(where), units=unit_of, notes=[RULES_NOTE])


def _columns(lines: list[str], where: Path) -> tuple[int, _Columns]:
    """The header's line number and the columns it and the units row below it name; one-line errors for a
    missing or doubled header, a missing units row, a missing ID or kernel name column."""
    start = next((i for i, line in enumerate(lines) if line.lstrip("\ufeff").startswith(HEADER_START)), None)
    if start is None:
        raise ReportError(
            f"{where}: no ncu CSV header (a line starting {HEADER_START}); "
            "export one with `ncu -i REPORT --csv --page raw`"
        )
    header = _row(lines[start].lstrip("\ufeff"), where, start)
    if len(set(header)) != len(header):
        raise ReportError(f"{where}: line {start + 1}: the CSV header names a column twice")
    if start + 1 >= len(lines):
        raise ReportError(f"{where}: the ncu CSV ends after its header (no units row, no launches)")
    units = _row(lines[start + 1], where, start + 1)
    if len(units) != len(header) or (units and units[0] != ""):
        raise ReportError(
            f"{where}: line {start + 2}: expected ncu's units row after the header "
            "(`--page raw` prints one); without units no value can be trusted"
        )
    col = {h: i for i, h in enumerate(header)}
    for needed in ("ID", "Kernel Name"):
        if needed not in col:
            raise ReportError(f"{where}: the ncu CSV header has no {needed!r} column")
    nvtx_col = next((i for h, i in col.items() if h.startswith(NVTX_PUSH_POP)), None)
    metrics = [
        (i, h)
        for i, h in enumerate(header)
        if h not in ID_FIELDS and not h.startswith(("thread Domain:", "Id:Domain:"))
    ]
    scales = {}
    for i, h in metrics:
        try:
            scales[i] = base_unit(units[i]) if units[i] else ("", 1.0)
        except UnitError:
            scales[i] = (units[i], 1.0)  # kept as printed: ncu_tidy refuses it only if the metric is used
    return start, _Columns(header, units, col, nvtx_col, metrics, scales)


def _launch_row(cells: list[str], c: _Columns, where: Path, n: int, ids: set, unit_of: dict) -> dict:
    """One launch's row from its CSV cells, each metric in its base unit (recorded in `unit_of`); one-line
    errors for a short row, a bad or repeated launch ID, text where a number with a unit belongs."""
    if len(cells) != len(c.header):
        raise ReportError(
            f"{where}: line {n + 1} has {len(cells)} fields, the header has {len(c.header)} "
            "(the CSV is cut short or mangled)"
        )
    launch = parse_number(cells[c.col["ID"]])
    if not isinstance(launch, int) or launch < 0:
        raise ReportError(f"{where}: line {n + 1}: ID {cells[c.col['ID']]!r} is not a launch number")
    if launch in ids:
        raise ReportError(f"{where}: line {n + 1}: launch ID {launch} appears twice")
    kernel = cells[c.col["Kernel Name"]]
    row = {
        "launch": launch,
        "range": 0,
        "kernel": short_kernel_name(kernel),  # as an .ncu-rep names it: the function's name
        "mangled_name": kernel,
        "nvtx": nvtx_text(cells[c.nvtx_col]) if c.nvtx_col is not None else "",
    }
    for i, h in c.metrics:
        value = parse_number(cells[i])
        unit, factor = c.scales[i]
        if c.units[i] and isinstance(value, str):
            raise ReportError(f"{where}: line {n + 1}: {h} = {value!r} is not a number (unit {c.units[i]!r})")
        if isinstance(value, (int, float)):
            if factor != 1.0:
                value = value * factor
            unit_of.setdefault(h, unit)
        row[h] = value
    return row


def _row(line: str, where: Path, n: int) -> list[str]:
    try:
        return next(csv.reader([line], strict=True))
    except (csv.Error, StopIteration) as exc:
        raise ReportError(f"{where}: line {n + 1} is not a valid CSV row ({exc})") from None
