"""What a capture file is, by its content (not its name), and its plain bytes (gzip undone)."""

from __future__ import annotations

import contextlib
import gzip
import shutil
import sqlite3
import tempfile
import zlib
from pathlib import Path

from profiler.errors import ReportError, refuse_special

NCU_REP = "ncu-rep"
NCU_CSV = "ncu-csv"
NSYS_REP = "nsys-rep"
NSYS_SQLITE = "nsys-sqlite"
READS = (
    "Nsight Compute reports (.ncu-rep) and their `--csv --page raw` output, Nsight Systems reports "
    "(.nsys-rep) and their sqlite export, roofline run directories, and folders of these; "
    "any of these files also gzip-compressed"
)
KIND_NAMES = {
    NCU_REP: "an Nsight Compute report",
    NCU_CSV: "ncu CSV (--page raw)",
    NSYS_REP: "an Nsight Systems report",
    NSYS_SQLITE: "an Nsight Systems sqlite export",
}

_MAGIC = {b"NVR\x00": NCU_REP, b"NVIDIA Tegra Profiler Report": NSYS_REP}
_SQLITE_MAGIC = b"SQLite format 3\x00"
# Tables every `nsys export --type sqlite` holds (schema 3.x; a run without CUDA lacks the kernel table).
NSYS_TABLES = ("StringIds", "META_DATA_EXPORT")


def sniff(path: Path) -> str:
    """The capture format of `path`, judged by its first bytes; a clear error for anything else."""
    path = Path(path)
    if not path.exists():
        raise ReportError(f"{path}: no such file or directory")
    if path.is_dir():
        raise ReportError(f"{path}: is a folder, not a report")
    refuse_special(path)
    head = _head(path)
    if not head:
        raise ReportError(f"{path}: the file is empty (0 bytes)")
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    if head.startswith(_SQLITE_MAGIC):
        with plain_file(path) as plain:
            tables = _sqlite_tables(plain, path)
        if all(t in tables for t in NSYS_TABLES):
            return NSYS_SQLITE
        shown = ", ".join(sorted(tables)[:6]) + (" ..." if len(tables) > 6 else "") or "none"
        raise ReportError(
            f"{path}: an SQLite database that is not an Nsight Systems export (it lacks the "
            f"{' and '.join(NSYS_TABLES)} tables; its tables: {shown}); roofline reads {READS}"
        )
    if b"\x00" not in head:
        from profiler.ncu_csv import has_csv_header  # lazy

        with plain_file(path) as plain:
            if has_csv_header(plain):
                return NCU_CSV
    raise ReportError(f"{path}: {describe(head)}, not a capture roofline reads ({READS})")


def _sqlite_tables(path: Path, name: Path) -> set[str]:
    """The table names of an SQLite file, opened read-only (it is never changed)."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
        try:
            return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise ReportError(
            one_line(f"{name}: an SQLite file that cannot be read ({exc})")[:300] + ": damaged or cut short"
        ) from None


def one_line(text: str) -> str:
    """A message on one line (library errors can quote a schema or a log across several)."""
    return " ".join(text.split())


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


_DESCRIBED = (
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"\x1f\x8b", "a gzip file"),
    (b"PK\x03\x04", "a zip archive"),
    (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"BZh", "a bzip2-compressed file"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
)


def describe(head: bytes) -> str:
    """What a file looks like from its first bytes, in a few words."""
    for magic, what in _DESCRIBED:
        if head.startswith(magic):
            return what
    if b"\x00" in head:
        return "binary data"
    text = head.decode("utf-8", errors="replace")
    if "\ufffd" in text[:-4]:
        return "binary data"
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped:
        return "a text file of blank lines"
    first = stripped.splitlines()[0][:60]
    if stripped.startswith("{"):
        return "a JSON document"
    if stripped.startswith(("==PROF==", "==WARNING==", "==ERROR==")):
        return "Nsight Compute console output without a `--csv --page raw` table in it"
    if first.count(",") >= 2:
        return f"a CSV file that is not ncu's raw page (its first line starts {first!r})"
    return f"a text file starting {first!r}"
