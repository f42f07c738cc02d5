"""One entry point for every capture format: the reader is chosen by a file's content, not its name.

Each reader returns the same tidy launch table (profiler/ncu_tidy.py columns; NaN where a source has
no counter), with `source` naming the file each launch came from.
"""

from __future__ import annotations

import contextlib
import gzip
import shutil
import tempfile
import zlib
from pathlib import Path

import pandas as pd

from profiler.errors import ReportError

NCU_REP = "ncu-rep"
READS = ("Nsight Compute reports (.ncu-rep), roofline run directories, and folders of reports; "
         "any of these files also gzip-compressed")

_MAGIC = {b"NVR\x00": NCU_REP}


def sniff(path: Path) -> str:
    """The capture format of `path`, judged by its first bytes; a clear error for anything else."""
    path = Path(path)
    if not path.exists():
        raise ReportError(f"{path}: no such file or directory")
    if path.is_dir():
        raise ReportError(f"{path}: is a folder, not a report")
    head = _head(path)
    if not head:
        raise ReportError(f"{path}: the file is empty (0 bytes)")
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    raise ReportError(f"{path}: {describe(head)}, not a capture roofline reads ({READS})")


def _head(path: Path, n: int = 512) -> bytes:
    """The first bytes of the file, or of its content when it is gzip-compressed."""
    with open(path, "rb") as f:
        head = f.read(n)
    if head.startswith(b"\x1f\x8b"):
        try:
            with gzip.open(path, "rb") as g:
                return g.read(n)
        except (OSError, EOFError, zlib.error) as exc:
            raise ReportError(f"{path}: a gzip file that cannot be decompressed ({exc})") from None
    return head


@contextlib.contextmanager
def plain_file(path: Path):
    """`path` itself, or a temporary decompressed copy of a gzip-compressed capture."""
    with open(path, "rb") as f:
        compressed = f.read(2) == b"\x1f\x8b"
    if not compressed:
        yield Path(path)
        return
    with tempfile.TemporaryDirectory(prefix="roofline-") as tmp:
        plain = Path(tmp) / Path(path).name.removesuffix(".gz")
        try:
            with gzip.open(path, "rb") as src, open(plain, "wb") as dst:
                shutil.copyfileobj(src, dst)
        except (OSError, EOFError, zlib.error) as exc:
            raise ReportError(f"{path}: the gzip file is damaged or cut short ({exc})") from None
        yield plain


def describe(head: bytes) -> str:
    """What a file looks like from its first bytes, in a few words."""
    if head.startswith(b"SQLite format 3\x00"):
        return "an SQLite database"
    if head.startswith(b"\x1f\x8b"):
        return "a gzip file"
    if head.startswith(b"PK\x03\x04"):
        return "a zip archive"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return "binary data"
    first = text.lstrip().splitlines()[0][:60] if text.strip() else ""
    return f"a text file starting {first!r}" if first else "a text file of blank lines"


def read_launches(path: Path) -> pd.DataFrame:
    """The tidy launch table of one report file, whatever its format."""
    kind = sniff(path)
    with plain_file(path) as plain:
        if kind == NCU_REP:
            from profiler.ncu_reader import read_ncu_report
            from profiler.ncu_tidy import tidy_launches

            table = tidy_launches(read_ncu_report(plain, name=path))
        else:  # pragma: no cover - every kind in _MAGIC has a branch
            raise ReportError(f"{path}: no reader for {kind}")
    table["source"] = Path(path).name
    table.attrs["source"] = str(path)
    return table


def is_report(path: Path) -> bool:
    try:
        sniff(path)
        return True
    except ReportError:
        return False


def read_folder(folder: Path) -> pd.DataFrame:
    """Every report in a folder (not recursive), one table; each launch names its source file."""
    folder = Path(folder)
    files = sorted(p for p in folder.iterdir() if p.is_file() and is_report(p))
    if not files:
        raise ReportError(f"{folder}: no report in this folder (roofline reads {READS})")
    tables = [read_launches(p) for p in files]
    offset = 0
    for t in tables:  # launch numbers stay unique across files
        t["launch"] = t["launch"] + offset
        offset = int(t["launch"].max()) + 1
    out = pd.concat(tables, ignore_index=True)
    rules, missing = {}, []
    for t in tables:
        base = int(t["launch"].min())
        rules.update({base + k: v for k, v in t.attrs.get("rules", {}).items()})
        missing += [m for m in t.attrs.get("missing_metrics", []) if m not in missing]
    out.attrs.update(rules=rules, missing_metrics=missing, source=str(folder), sources=[p.name for p in files])
    return out
