"""What roofline reads of an Nsight Systems sqlite export: the schema version, the tables and columns it
needs (REQUIRED) or uses where present (OPTIONAL), and the checks that name what an export lacks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from profiler.errors import ReportError

SCHEMA_MAJOR = "3"  # read and tested: 3.20.3 (nsys 2025.3.2 export)

# the kernel table's integer columns (checked as such when read)
KERNEL_INTS = (
    *("start", "end", "deviceId", "streamId", "correlationId", "globalPid"),
    *("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "registersPerThread"),
)
REQUIRED = {
    "StringIds": ("id", "value"),
    "CUPTI_ACTIVITY_KIND_KERNEL": (
        *KERNEL_INTS[:6],
        "shortName",
        "demangledName",
        *KERNEL_INTS[6:],
        "staticSharedMemory",
        "dynamicSharedMemory",
    ),
    "CUPTI_ACTIVITY_KIND_RUNTIME": ("start", "end", "correlationId", "globalTid", "nameId"),
}
OPTIONAL = {
    "NVTX_EVENTS": ("start", "end", "eventType", "text", "textId", "globalTid"),
    "TARGET_INFO_GPU": ("id", "name", "smCount"),
}
_WHY_MISSING = {
    "CUPTI_ACTIVITY_KIND_KERNEL": "nsys recorded no CUDA kernel (the program launched none, or it was not "
    "traced with -t cuda)",
    "CUPTI_ACTIVITY_KIND_RUNTIME": "nsys recorded no CUDA API calls (not traced with -t cuda?)",
    "StringIds": "every name in an export is an id into it",
}


def table_names(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def column_names(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def export_meta(conn: sqlite3.Connection, name: Path) -> dict[str, str]:
    """META_DATA_EXPORT as a dict; a clear error when it is absent or of an unknown schema."""
    if "META_DATA_EXPORT" not in table_names(conn):
        raise ReportError(
            f"{name}: an SQLite database without META_DATA_EXPORT: not an Nsight Systems "
            "export (roofline reads `nsys export --type sqlite` output)"
        )
    meta = {str(k): str(v) for k, v in conn.execute("SELECT name, value FROM META_DATA_EXPORT")}
    version = meta.get("EXPORT_SCHEMA_VERSION", "?")
    major = meta.get("EXPORT_SCHEMA_VERSION_MAJOR", version.split(".")[0])
    if major != SCHEMA_MAJOR:
        raise ReportError(
            f"{name}: nsys export schema {version} (from {meta.get('EXPORT_PRODUCT_NAME', '?')} "
            f"{meta.get('EXPORT_PRODUCT_VERSION', '?')}) is not one roofline reads: it reads schema "
            f"{SCHEMA_MAJOR}.x (checked on 3.20.3, nsys 2025.3)"
        )
    return meta


def check_schema(conn: sqlite3.Connection, name: Path, meta: dict[str, str]) -> set[str]:
    """The optional tables present; a clear error naming what a required table or column lacks."""
    tables = table_names(conn)
    schema = meta.get("EXPORT_SCHEMA_VERSION", "?")
    for table, columns in REQUIRED.items():
        if table not in tables:
            why = _WHY_MISSING.get(table, "")
            raise ReportError(
                f"{name}: this nsys export (schema {schema}) has no {table} table" + (f": {why}" if why else "")
            )
        missing = [c for c in columns if c not in column_names(conn, table)]
        if missing:
            raise ReportError(
                f"{name}: {table} lacks column(s) {', '.join(missing)} (schema {schema}; "
                "roofline reads schema 3.20.3's layout)"
            )
    present = set()
    for table, columns in OPTIONAL.items():
        if table in tables:
            missing = [c for c in columns if c not in column_names(conn, table)]
            if missing:
                raise ReportError(f"{name}: {table} lacks column(s) {', '.join(missing)} (schema {schema})")
            present.add(table)
    if "NVTX_EVENTS" in present and "ENUM_NSYS_EVENT_TYPE" not in tables:
        raise ReportError(
            f"{name}: has NVTX_EVENTS but no ENUM_NSYS_EVENT_TYPE to tell its ranges apart (schema {schema})"
        )
    return present


def range_event_types(conn: sqlite3.Connection, name: Path) -> list[int]:
    """Ids of the NVTX range event types (push/pop and start/end), by name from ENUM_NSYS_EVENT_TYPE."""
    if not {"id", "name"} <= column_names(conn, "ENUM_NSYS_EVENT_TYPE"):
        raise ReportError(f"{name}: ENUM_NSYS_EVENT_TYPE lacks its id and name columns")
    ids = [
        int(i)
        for i, n in conn.execute("SELECT id, name FROM ENUM_NSYS_EVENT_TYPE")
        if isinstance(n, str) and n.startswith(("Nvtx", "Nvtxt")) and n.endswith(("PushPopRange", "StartEndRange"))
    ]
    if not ids:
        raise ReportError(
            f"{name}: ENUM_NSYS_EVENT_TYPE names no NVTX range type (NvtxPushPopRange, "
            "NvtxStartEndRange): a schema roofline does not understand"
        )
    return ids
